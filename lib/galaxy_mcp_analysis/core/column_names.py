"""A pasted table's column names: given as a list, or read from its first line (``header=True``).

Galaxy's page table (``history_dataset_as_table``) labels its columns with the dataset's
``column_names`` metadata and skips its first ``comment_lines`` lines; a plain tabular upload sets
neither from a header line that lacks a leading '#', so the header shows as a data row under columns
"0", "1", ... The names decided here are set as that metadata once the upload has finished.
"""

from dataclasses import dataclass

#: Longest column name accepted (Galaxy stores metadata as JSON; a page header wants short labels).
MAX_NAME_LENGTH = 200
#: Most columns a name list may have.
MAX_COLUMNS = 1000


@dataclass(frozen=True)
class ColumnHeader:
    names: list[str]
    #: Lines at the top of the file that are the header, not data (Galaxy's ``comment_lines``).
    header_lines: int


def column_header(content: str, column_names: list | None, header: bool) -> ColumnHeader | None:
    """The names and header lines for ``content``; None when neither is asked.
    Raises ValueError saying what is wrong."""
    if column_names is None and not header:
        return None
    names = None
    if column_names is not None:
        names = _checked_names(column_names)
    first_line = content.split("\n", 1)[0].rstrip("\r")
    if header:
        from_line = first_line[1:] if first_line.startswith("#") else first_line
        if not from_line.strip():
            raise ValueError("header=true but the first line is empty; put the column names on the first line, "
                             "tab-separated, or pass column_names instead.")
        if names is None:
            names = _checked_names([name.strip() for name in from_line.split("\t")])
    return ColumnHeader(names, 1 if header else 0)


def _checked_names(column_names: list) -> list[str]:
    if not isinstance(column_names, list) or not column_names:
        raise ValueError("column_names must be a non-empty list of strings, e.g. [\"gene\", \"count\"].")
    if len(column_names) > MAX_COLUMNS:
        raise ValueError(f"column_names has {len(column_names)} names; at most {MAX_COLUMNS}.")
    for index, name in enumerate(column_names):
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"column_names[{index}] must be a non-empty string, got {name!r:.40}.")
        if len(name) > MAX_NAME_LENGTH or any(c in name for c in "\t\r\n\0"):
            raise ValueError(f"column_names[{index}] must be one line without tabs, at most {MAX_NAME_LENGTH} "
                             f"characters, got {name!r:.40}.")
    return list(column_names)
