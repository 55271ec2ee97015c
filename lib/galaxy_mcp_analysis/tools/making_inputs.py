"""MCP declarations for making inputs (operations in galaxy_mcp_analysis.operations.making_inputs)."""

from typing import (
    Annotated,
    Any,
)

from pydantic import Field

from galaxy_mcp_analysis.core.element_identifiers import pastes
from galaxy_mcp_analysis.core.tool_facts import (
    Item,
    RUN_EFFECTS,
    Runs,
)
from galaxy_mcp_analysis.mcp.declaration import analysis_tool
from galaxy_mcp_analysis.mcp.params import HistoryId
from galaxy_mcp_analysis.tools.tool_inputs import ToolVersion


@analysis_tool(title="Create dataset from text", read_only=False, starts_jobs=True, toolsets=("core",),
               effects={"created": (("result.dataset_id", "dataset"),), "jobs": (("result.job_id", "job"),)},
               example={"history_id": Item("history"), "content": "a\tb\n", "file_type": "tabular"})
def create_dataset_from_text(
    ops,
    history_id: HistoryId,
    content: Annotated[
        str, Field(description="The file's text, stored byte for byte as UTF-8 (1 MiB cap by default).")
    ],
    name: Annotated[str | None, Field(description="Dataset name; Galaxy's default is 'Pasted Entry'.")] = None,
    file_type: Annotated[
        str, Field(description="Datatype extension (tabular, bed, fasta, ...) or 'auto' to let Galaxy detect it.")
    ] = "auto",
    dbkey: Annotated[str, Field(description="Genome build, e.g. 'hg38'; '?' for unknown.")] = "?",
    column_names: Annotated[list[str] | None, Field(description="A table's column names (page headers).")] = None,
    header: Annotated[bool, Field(description="Line 1 = column names; prefix '#' or pages show it twice.")] = False,
) -> dict[str, Any]:
    """Create a history dataset from text you have in context (a small TSV, BED, FASTA, ...).

    Returns dataset_id, hid, name, job_id, state (usually "queued"),
    file_type, bytes, and Galaxy's outputs. The dataset is usable as a tool input at once;
    its bytes are exactly the content given (no line-ending or tab conversion).
    column_names/header: set once the upload ends (waited; column_names_set).

    Example: create_dataset_from_text(history_id, file_type="tabular", content="#gene\\tn\\nmecA\\t3\\n", header=true)

    Errors (nothing is created): [VALIDATION_ERROR] empty content, content over the server cap,
    unknown file_type (closest datatypes listed); [AUTHORIZATION_ERROR] another user's history;
    [NOT_FOUND] unknown history.
    Next: create_collection to group datasets; run_tool; peek_dataset_content to read it back.
    """
    return ops.create_dataset_from_text(history_id, content, name=name, file_type=file_type, dbkey=dbkey,
                                        column_names=column_names, header=header)


@analysis_tool(title="Create a one-time upload URL", read_only=False, starts_jobs=True,
               example={"history_id": Item("history"), "name": "local.bin"})
def create_upload_url(
    ops,
    history_id: HistoryId,
    name: Annotated[str, Field(description="The dataset's name.")],
    file_type: Annotated[str, Field(description="Datatype extension, or 'auto' (detected).")] = "auto",
    dbkey: Annotated[str, Field(description="Genome build; '?' unknown.")] = "?",
    max_bytes: Annotated[int | None, Field(description="Size cap; default and most: the server's.")] = None,
) -> dict[str, Any]:
    """A one-time URL that uploads a local file of any size into a history (for a client with a shell).

    Returns upload_url, method, headers, expires_at (minutes away), max_bytes, curl (the exact command;
    <file> stands for the path). The URL is its own credential (this history, size, one use). Upload's
    JSON: dataset_id, job_id (quota applies). 4xx, nothing made: expired, used, too large, deleted since.

    Example: create_upload_url(history_id="f2db41e1fa331b3e", name="reads.bam"), then run its curl.

    Errors: [VALIDATION_ERROR] unknown file_type, max_bytes over the cap; [NOT_FOUND] or
    [AUTHORIZATION_ERROR] not your history. Next: wait_for_jobs(job_ids=[job_id]).
    """
    return ops.create_upload_url(history_id, name, file_type=file_type, dbkey=dbkey, max_bytes=max_bytes)


# Only its pasted form starts a job (the upload): a rule denying creates_jobs leaves the plain form usable.
@analysis_tool(title="Create dataset collection", read_only=False, starts_jobs=pastes, toolsets=("core",), effects={
    "created": (("result.collection_id", "collection"), ("result.copied_elements[].copy_id", "dataset"),
                ("result.pasted_dataset_ids[]", "dataset")),
    "jobs": (("result.job_ids[]", "job"),)},
               example={"history_id": Item("history"), "collection_type": "list", "copy_elements": False,
                        "element_identifiers": [{"name": "a", "src": "hda", "id": Item("dataset")}]})
def create_collection(
    ops,
    history_id: HistoryId,
    collection_type: Annotated[
        str,
        Field(
            description="list, paired, paired_or_unpaired, or nested with ':' (list:paired, list:list, ...)."
        ),
    ],
    element_identifiers: Annotated[
        list[dict[str, Any]],
        Field(
            description='[{"name": "s1", "src": "hda", "id": "<dataset id>"}] or src "pasted" (below); nested: '
            '{"name", "src": "new_collection", "collection_type", "element_identifiers": [...]} or {"name", "src": '
            '"hdca", "id"}.'
        ),
    ],
    name: Annotated[str | None, Field(description="Collection name; default '<collection_type> of <n>'.")] = None,
    hide_source_items: Annotated[
        bool, Field(description="Hide the source datasets (your own).")
    ] = False,
    copy_elements: Annotated[
        bool, Field(description="Hidden copies of the datasets in it (Galaxy's default; copied_elements).")
    ] = True,
) -> dict[str, Any]:
    """Create a dataset collection in a history from existing datasets or pasted texts: the input for map-over.

    Checked before anything is created: names unique per level; paired is "forward" and
    "reverse"; paired_or_unpaired also a single "unpaired"; depth matches collection_type; src hda,
    ldda or pasted innermost, new_collection or hdca above; every id readable by you. Returns
    collection_id, hid, name, collection_type, element_count, populated_state, elements
    (identifier, element_type, id, state; at most 50, elements_truncated if more).

    Pasted elements {"name", "src": "pasted", "content", "file_type"?, "dbkey"?, "column_names"?, "header"?}
    are uploaded in one job,
    byte for byte, as the collection's hidden datasets (no copies); mapping over it works at once. Then the
    result adds job_ids (for wait_for_jobs) and pasted_dataset_ids. The pasted bytes share one cap (as
    create_dataset_from_text); existing items cannot be mixed in.

    Example: create_collection(history_id, collection_type="list", element_identifiers=[
    {"name": "A", "src": "pasted", "content": "mecA\\t3\\n", "file_type": "tabular"}, {"name": "B", ...}])

    Errors: [VALIDATION_ERROR] shape problems, each with its path (element_identifiers[2]...) and fix;
    [NOT_FOUND] unknown ids; [AUTHORIZATION_ERROR] another user's history or private dataset.
    Next: run_tool with {"<input>": {"src": "hdca", "id": collection_id}} maps a tool over it.
    """
    return ops.create_collection(
        history_id,
        collection_type,
        element_identifiers,
        name=name,
        hide_source_items=hide_source_items,
        copy_elements=copy_elements,
    )


# Galaxy's stock run_tool, declared again with the parameter it lacks (tool_version; get_tool_details likewise,
# in tools/tool_information.py); tools/stock.py holds the other stock tools.
ToolRequest = Annotated[
    dict[str, Any], Field(description="Tool parameters by name, nested or flat; value shapes in the description.")
]


@analysis_tool(title="Run a tool", read_only=False, starts_jobs=True, runs=Runs("tool_id", "tool"), effects=RUN_EFFECTS,
               toolsets=("core",),
               example={"history_id": Item("history"), "tool_id": "cat1",
                        "inputs": {"input1": {"src": "hda", "id": Item("dataset")}}})
def run_tool(
    ops, history_id: str, tool_id: str, inputs: ToolRequest, tool_version: ToolVersion = None
) -> dict[str, Any]:
    """Run a Galaxy tool in a history; returns the jobs and outputs it created. Not idempotent.

    inputs are checked first against the tool's model (get_tool_input_schema; dry run:
    check_tool_inputs); every problem (unknown name, option, unselected branch, missing, type,
    datatype) is reported at once with its path and nothing is queued. Nested form or Galaxy's flat
    names ("cond|p", "rep_0|p"). Values: {"src": "hda", "id": "<id>"} (dataset), {"src": "hdca",
    "id": "<id>"} (collection), or plain.

    Map-over (one job per collection element): give a single-dataset input the batch form. Example:
    run_tool(history_id, tool_id="cat1", inputs={"input1": {"batch": true, "values": [{"src": "hdca", "id": "<id>"}]}})
    A bare {"src": "hdca", "id": ...} on a single-dataset input is wrapped for you; mapped_over
    [{input, collection_id, wrapped}] lists every collection mapped over. Never wrapped: data_collection
    inputs, multiple="true" inputs (they take the whole collection in one job).

    tool_version: a version from get_tool_versions (None: Galaxy's default); guids work as tool_id.
    Returns tool_version, jobs, outputs, output_collections, mapped_over, implicit_collections [{id, name,
    collection_type, element_count, output_name, populated_state (structure, not datasets),
    ...}], inputs_checked (false: not modelled).
    Errors: [VALIDATION_ERROR] inputs (paths listed); [NOT_FOUND] unknown tool (search_tools),
    version (the served ones listed) or dataset; [AUTHORIZATION_ERROR] inputs you cannot read.
    Next: wait_for_jobs(job_ids=...); get_collection_details; peek_dataset_content.
    """
    return ops.run_tool(history_id, tool_id, inputs, tool_version=tool_version)
