"""MCP declarations for reading outputs (operations in galaxy_mcp_analysis.operations.reading)."""

from typing import (
    Annotated,
    Any,
)

from pydantic import Field

from galaxy_mcp_analysis.core.tool_facts import Item
from galaxy_mcp_analysis.mcp.declaration import analysis_tool
from galaxy_mcp_analysis.mcp.params import (
    CollectionId,
    DatasetId,
)
from galaxy_mcp_analysis.mcp.result_text import (
    RawText,
    RecordTexts,
)


@analysis_tool(
    title="Read dataset content",
    read_only=True,
    idempotent=True,
    toolsets=("core",),
    text=RawText("content", first=("offset", "length", "next_offset", "eof", "encoding")),
    example={"dataset_id": Item("dataset")},
)
def peek_dataset_content(
    ops,
    dataset_id: DatasetId,
    offset: Annotated[int, Field(description="Byte offset to start at (>= 0); pass the previous next_offset.")] = 0,
    max_bytes: Annotated[
        int, Field(description="Bytes to return (>= 1); clamped to the server cap, 1 MiB by default.")
    ] = 65536,
    whole_lines: Annotated[bool, Field(description="End the chunk after the last complete line.")] = True,
    allow_binary: Annotated[bool, Field(description="Return binary datatypes as base64 instead of refusing.")] = False,
) -> dict[str, Any]:
    """Read a history dataset's content: one chunk of its bytes, decoded as UTF-8 text.

    Returns content plus offset, length, next_offset (null at the end), eof, encoding
    ("utf-8", or "base64" with allow_binary), file_size, extension, state, capped,
    max_bytes_applied and peek (Galaxy's stored preview). Read on with offset=next_offset until
    eof; chunks never split a UTF-8 character and, with whole_lines, end at a newline
    (line_truncated: one line > max_bytes).
    gzip text is read decompressed; offsets count decompressed bytes (compressed: "gzip").
    Images (png, jpg, gif, svg, pdf...): an image block (<= 1568 px) and image {width, height, original_*}.

    Example: peek_dataset_content(dataset_id, max_bytes=4096) -> {"content": "chr1\\t100\\n...",
    "next_offset": 4090, ...}

    Errors: [NOT_READY] still queued/running (wait_for_jobs(dataset_ids=[...]));
    [VALIDATION_ERROR] binary datatype (convert it, or allow_binary=true), a collection id
    instead of a dataset id, offset < 0 or max_bytes < 1; [NOT_FOUND] unknown or purged dataset;
    [AUTHORIZATION_ERROR] another user's private dataset.
    Next: get_job_errors(dataset_id=...) for the job that made it; get_dataset_details.
    """
    return ops.peek_dataset_content(
        dataset_id, offset=offset, max_bytes=max_bytes, whole_lines=whole_lines, allow_binary=allow_binary
    )


@analysis_tool(
    title="Read a collection's datasets",
    read_only=True,
    idempotent=True,
    text=RecordTexts("elements", "content"),
    example={"collection_id": Item("collection")},
)
def peek_collection_content(
    ops,
    collection_id: CollectionId,
    element_offset: int = 0,
    max_elements: Annotated[int, Field(description="1 to 100.")] = 20,
    offset: int = 0,
    max_bytes: Annotated[int, Field(description="Per dataset.")] = 4096,
) -> dict[str, Any]:
    """peek_dataset_content's byte range (whole lines) of every dataset of a collection (nested ones in order),
    in one call.
    Returns element_count, next_element_offset (null: done), elements [{element_identifier, path
    (nested), dataset_id, content, next_offset, ...} or {..., error}: an unreadable one says why].
    All elements share the 1 MiB server cap (capped: fewer per call).
    Errors: [VALIDATION_ERROR] bad offsets; [NOT_FOUND]; [AUTHORIZATION_ERROR].
    Next: element_offset=next_element_offset; peek_dataset_content(dataset_id, offset=next_offset).
    """
    return ops.peek_collection_content(
        collection_id, element_offset=element_offset, max_elements=max_elements, offset=offset, max_bytes=max_bytes
    )


@analysis_tool(
    title="Read several datasets",
    read_only=True,
    idempotent=True,
    text=RecordTexts("datasets", "content"),
    example={"dataset_ids": [Item("dataset")]},
)
def peek_datasets_content(
    ops,
    dataset_ids: Annotated[list[str], Field(description="Encoded history dataset ids, 1 to 50.")],
    offset: int = 0,
    max_bytes: Annotated[int, Field(description="Per dataset.")] = 4096,
) -> dict[str, Any]:
    """peek_dataset_content's byte range (whole lines) of several datasets in one call, e.g. every output
    of a debugging session. Returns datasets [{dataset_id, name, content, next_offset, eof, ...} (a failed
    one adds misc_info, Galaxy's message) or {dataset_id, name, state, error}: one not readable yet says
    why], max_bytes_applied, capped (all
    share the 1 MiB server cap). Example: peek_datasets_content(dataset_ids=["a1", "b2"], max_bytes=2000).
    Errors: [VALIDATION_ERROR] 0 or over 50 ids, a malformed id; [NOT_FOUND] unknown id;
    [AUTHORIZATION_ERROR] another user's private dataset (nothing is read).
    Next: peek_dataset_content(dataset_id, offset=next_offset) to read one on.
    """
    return ops.peek_datasets_content(dataset_ids, offset=offset, max_bytes=max_bytes)


#: Stock Galaxy tools whose descriptions mislead agents; replaced through FastMCP transforms.
STOCK_DESCRIPTIONS = {
    "download_dataset": """Get a download URL and metadata (name, extension, file_size, state) for a dataset.

    Returns a URL, not the content: the bytes are not in this result. To read a dataset, call
    peek_dataset_content(dataset_id) (paged text). Use this only to hand a link to a person.
    Errors: [NOT_FOUND] unknown dataset; [AUTHORIZATION_ERROR] another user's dataset.
    Next: peek_dataset_content(dataset_id); get_dataset_details(dataset_id).
    """,
}
