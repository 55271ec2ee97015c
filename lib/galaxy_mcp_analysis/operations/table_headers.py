"""Column names of pasted tables, set as Galaxy's column metadata once their upload has finished.

Galaxy's fetch request carries no metadata, and a plain tabular upload's metadata step reads no
header from a first line without '#'; so the names (core.column_names) are set on the finished
datasets through the datatype's metadata (``column_names``, and ``comment_lines`` for a header
line), which Galaxy's page table and dataset views read. The upload job is waited for, bounded by
the server's wait cap; a dataset not finished by then says so in the result.
"""

from typing import Any

from galaxy.model import HistoryDatasetAssociation

from galaxy_mcp_analysis.core.column_names import (
    column_header,
    ColumnHeader,
)
from galaxy_mcp_analysis.core.errors import (
    AnalysisError,
    ErrorCode,
)

#: Extensions whose datatype is decided by Galaxy after the upload: checked once the dataset exists.
_DETECTED = ("auto",)


class TableHeaders:
    """Operations mixin of AnalysisOperationsManager (needs ``app``, ``trans``, ``settings`` and Jobs' polling)."""

    def checked_header(self, path: str, content: str, file_type: str, column_names, header: bool
                       ) -> ColumnHeader | None:
        """The column header asked for ``content``, or a [VALIDATION_ERROR] before anything is created."""
        try:
            asked = column_header(content, column_names, header)
        except ValueError as wrong:
            raise AnalysisError(ErrorCode.VALIDATION_ERROR, f"{path}: {wrong}",
                                "Fix the column names and call again; nothing was created.") from None
        if asked is not None:
            self.check_header_type(path, file_type)
        return asked

    def check_header_type(self, path: str, file_type: str) -> None:
        """Column names only for a datatype that has them (or one Galaxy will detect)."""
        if file_type in _DETECTED:
            return
        datatype = self.app.datatypes_registry.get_datatype_by_extension(file_type)
        if datatype is not None and "column_names" not in datatype.metadata_spec:
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                f"{path}: file_type {file_type!r} has no column names in Galaxy (not a tabular datatype).",
                "Use file_type='tabular' (tab-separated) or 'csv', or leave out column_names and header.",
            )

    def name_columns(self, job_id: str, headers: dict[str, ColumnHeader]) -> dict[str, Any]:
        """Wait for the upload job, then set each dataset's column metadata; what was set, per dataset id."""
        timed_out = self.until_job_ends(job_id, self.settings.max_wait_seconds)
        session = self.trans.sa_session
        named: dict[str, Any] = {}
        for dataset_id, header in headers.items():
            hda = session.get(HistoryDatasetAssociation, self.trans.security.decode_id(dataset_id))
            named[dataset_id] = self._named(hda, header, timed_out)
        session.commit()
        return named

    @staticmethod
    def _named(hda, header: ColumnHeader, timed_out: bool) -> dict[str, Any]:
        if hda.state != "ok":
            reason = "its upload is still running" if timed_out else f"its upload ended in state {hda.state!r}"
            return {"column_names_set": False, "state": hda.state,
                    "column_names_note": f"Column names were not set: {reason}."}
        metadata = hda.metadata
        if "column_names" not in metadata.spec:
            return {"column_names_set": False, "state": hda.state, "column_names_note":
                    f"Column names were not set: Galaxy detected {hda.extension!r}, which has none."}
        metadata.column_names = header.names
        if header.header_lines and not (metadata.comment_lines or 0) >= header.header_lines:
            # A header without '#' was counted as data: it is a header line now, not a row.
            metadata.comment_lines = header.header_lines
            if metadata.data_lines:
                metadata.data_lines = metadata.data_lines - header.header_lines
        hda.set_peek()
        return {"column_names_set": True, "state": hda.state, "column_names": header.names}
