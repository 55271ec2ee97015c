"""What a serialized history dataset may claim about itself, before an agent reads it.

Two of Galaxy's dataset fields can mislead an agent that takes them at their word:

- *Borrowed metadata.* A tool output declared with ``metadata_source`` (Filter, sort, ...) is
  created with its input's metadata copied in, so while the job is new, queued or running its
  ``metadata_data_lines``, ``metadata_columns`` etc. describe the input, not this output. Until the
  output is finished these fields are nulled: nothing about the output is known yet.
- *Previews.* ``peek`` is the preview Galaxy stored when the dataset was finished: at most
  ``PEEK_LINES`` lines, each cut short. A dataset with a peek gets ``peek_preview``: that it is
  a preview, how many lines the dataset has and how many the peek leaves out (from its metadata,
  when the datatype counts lines), its size, and the call that reads all of it.
"""

from typing import Any

from galaxy_mcp_analysis.core.result_ids import kind_of

#: Dataset states in which a dataset's own content and metadata do not exist yet.
UNFINISHED_STATES = frozenset({"new", "upload", "queued", "running", "paused", "deferred"})
#: Lines Galaxy's peek keeps (galaxy.datatypes.data.get_file_peek's LINE_COUNT).
PEEK_LINES = 5


def honest_dataset_views(value: Any) -> Any:
    """A copy of ``value`` with every serialized dataset in it, at any depth, made honest (module doc)."""
    if isinstance(value, list):
        return [honest_dataset_views(item) for item in value]
    if not isinstance(value, dict):
        return value
    view = {key: honest_dataset_views(item) for key, item in value.items()}
    if kind_of(view) != "dataset":
        return view
    if view.get("state") in UNFINISHED_STATES:
        view.update({key: None for key in view if key.startswith("metadata_")})
    elif view.get("peek"):
        view["peek_preview"] = peek_preview(view)
    return view


def peek_preview(view: dict[str, Any]) -> dict[str, Any]:
    """What a dataset's ``peek`` shows of it and what it leaves out."""
    lines = view.get("metadata_data_lines")
    lines = lines if isinstance(lines, int) and not isinstance(lines, bool) else None
    return {
        "is_preview": True,
        "lines_at_most": PEEK_LINES,
        "data_lines": lines,
        "lines_left_out": None if lines is None else max(0, lines - PEEK_LINES),
        "file_size": view.get("file_size"),
        "read_all": f"peek_dataset_content(dataset_id={view.get('id')!r})",
    }
