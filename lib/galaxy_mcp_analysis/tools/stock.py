"""Galaxy's 37 stock MCP tools: the one table of their facts (annotations among them), and tighter descriptions.

Galaxy 26.1 registers its tools without MCP annotations, and FastMCP keeps only the
first paragraphs of their docstrings (returns, errors and next steps are dropped).
Both are applied on the live server by mcp.surface.ToolSurface; doc/tools.md
(generated, `make tools-doc`) shows the result. Our own tools declare their
annotations next to their code (mcp.declaration.analysis_tool).

Annotations are decided per tool: reading is read-only and idempotent; tools that
create things (histories, jobs, uploads, imports) are not idempotent; deactivating a
user tool and cancelling an invocation are destructive; tools that reach outside
Galaxy (IWC's manifest, quay.io, URL uploads) are open-world. ``run_tool`` and
``invoke_workflow`` act inside Galaxy (closed world), although a Galaxy tool they
run may itself download data.
"""

from galaxy_mcp_analysis.core.tool_facts import (
    facts_table,
    Item,
    RUN_EFFECTS,
    Runs,
    ToolFacts,
)
from galaxy_mcp_analysis.mcp.declaration import annotations_of
from galaxy_mcp_analysis.mcp.result_text import Table

R, W = True, False  # read-only / writes
#: name: (title, readOnly, destructive, idempotent, openWorld)
_TABLE = {
    "connect": ("Connect and identify the user", R, False, True, False),
    "get_server_info": ("Galaxy server information", R, False, True, False),
    "get_user": ("Current user", R, False, True, False),
    "search_tools": ("Search tools by name", R, False, True, False),
    "search_tools_by_keywords": ("Search tools by keywords", R, False, True, False),
    "get_tool_panel": ("Tool panel sections", R, False, True, False),
    "get_tool_run_examples": ("Tool test cases as examples", R, False, True, False),
    "get_tool_citations": ("Tool citations", R, False, True, False),
    "get_job_status": ("Job status", R, False, True, False),
    "get_job_details": ("Job that created a dataset", R, False, True, False),
    "list_histories": ("List histories", R, False, True, False),
    "list_history_ids": ("List history ids and names", R, False, True, False),
    "create_history": ("Create a history", W, False, False, False),
    "get_history_details": ("History summary", R, False, True, False),
    "get_history_contents": ("History contents", R, False, True, False),
    "get_dataset_details": ("Dataset metadata", R, False, True, False),
    "get_collection_details": ("Collection elements", R, False, True, False),
    "download_dataset": ("Dataset download URL", R, False, True, False),
    "upload_file_from_url": ("Upload a file from a URL", W, False, False, True),
    "list_workflows": ("List workflows", R, False, True, False),
    "get_workflow_details": ("Workflow steps and inputs", R, False, True, False),
    "invoke_workflow": ("Run a workflow", W, False, False, False),
    "get_invocations": ("List workflow invocations", R, False, True, False),
    "get_invocation_details": ("Workflow invocation state", R, False, True, False),
    "cancel_workflow_invocation": ("Cancel a workflow invocation", W, True, True, False),
    "search_iwc_workflows": ("Search IWC workflows", R, False, True, True),
    "get_iwc_workflow_details": ("IWC workflow details", R, False, True, True),
    "import_workflow_from_iwc": ("Import an IWC workflow", W, False, False, True),
    "list_user_tools": ("List your user-defined tools", R, False, True, False),
    "create_user_tool": ("Create a user-defined tool", W, False, False, False),
    "delete_user_tool": ("Deactivate a user-defined tool", W, True, True, False),
    "run_user_tool": ("Run a user-defined tool", W, False, False, False),
    "recommend_biocontainer": ("Find a biocontainer image", R, False, True, True),
    "list_file_source_templates": ("File source templates", R, False, True, False),
    "list_user_file_sources": ("Your file sources", R, False, True, False),
}
#: The rest of a stock tool's facts (core.tool_facts.ToolFacts): jobs, the Galaxy tools it runs, the audit's effects.
_MORE = {
    "upload_file_from_url": {"starts_jobs": True, "effects": RUN_EFFECTS},
    "run_user_tool": {"starts_jobs": True, "runs": Runs("tool_uuid", "user_tool"), "effects": RUN_EFFECTS},
    "create_history": {"history": ("result.id",), "effects": {"created": (("result.id", "history"),)},
                       "toolsets": ("core",)},
    "get_collection_details": {"toolsets": ("core",)},
    "invoke_workflow": {"starts_jobs": True, "runs": Runs("workflow_id", "workflow"),
                        "effects": {"created": (("result.id", "invocation"), ("result[].id", "invocation"))}},
    "cancel_workflow_invocation": {"effects": {"changed": (("result.invocation.id", "invocation"),
                                                           ("arguments.invocation_id", "invocation"))}},
    "import_workflow_from_iwc": {"effects": {"created": (("result.id", "workflow"),)}},
    "create_user_tool": {"effects": {"created": (("result.uuid", "user_tool"),)}},
    "delete_user_tool": {"effects": {"deleted": (("arguments.uuid", "user_tool"),)}},
}

#: The example call of a stock tool (core.tool_facts.ToolFacts.example: the test suite's valid call, never served).
_EXAMPLES = {
    "connect": {},
    "get_server_info": {},
    "get_user": {},
    "search_tools": {"query": "sort"},
    "search_tools_by_keywords": {"keywords": ["sort"]},
    "get_tool_run_examples": {"tool_id": "sort1"},
    "get_tool_citations": {"tool_id": "sort1"},
    "get_job_status": {"job_id": Item("job")},
    "get_job_details": {"dataset_id": Item("dataset")},
    "list_histories": {"limit": 5},
    "get_history_contents": {"history_id": Item("history")},
    "get_dataset_details": {"dataset_id": Item("dataset")},
    "get_collection_details": {"collection_id": Item("collection")},
    "download_dataset": {"dataset_id": Item("dataset")},
    "upload_file_from_url": {"history_id": Item("history"), "url": Item("url")},
    "list_workflows": {},
    "invoke_workflow": {"workflow_id": Item("workflow"), "history_id": Item("history"),
                        "inputs": {"table": {"src": "hda", "id": Item("dataset")}}},
    "get_invocation_details": {"invocation_id": Item("invocation")},
    "recommend_biocontainer": {"packages": ["samtools"]},
}


def _facts(name, title, read_only, destructive, idempotent, open_world) -> ToolFacts:
    return ToolFacts(name, title, read_only, destructive, idempotent, open_world, **_MORE.get(name, {}),
                     example=_EXAMPLES.get(name))


#: The facts of each of Galaxy's 37 stock tools: the one stock table.
STOCK_FACTS: dict[str, ToolFacts] = facts_table(_facts(name, *row) for name, row in _TABLE.items())
#: Their annotations, applied on the live server.
STOCK_ANNOTATIONS = {name: annotations_of(facts) for name, facts in STOCK_FACTS.items()}

#: Tighter stock descriptions (what, returns, limits, example, errors, next). The tools
#: whose behaviour the patch set changes keep theirs next to that capability's tools.
STOCK_DESCRIPTIONS = {
    "connect": """Check the API key and identify its user.

    Returns connected, user {id, email, username}, server {version, brand, url}. Call once per session.
    Errors: [AUTHENTICATION_ERROR] missing or invalid key.
    Next: list_histories() or create_history(name); search_tools(query).
    """,
    "get_server_info": """Galaxy's server {version, url}, capabilities and, with this patch set, patch_set.

    Next: connect() to check your key; get_user() for who you are.
    """,
    "get_user": """The API key's user: id, username, email, is_admin, active, create_time (no quotas).

    Errors: [AUTHENTICATION_ERROR] invalid key. Next: list_histories().
    """,
    "search_tools": """Find tools via Galaxy's tool search for query (name, id, description, help, section; any case).

    Returns tools [{id, name, version, description}] and count.
    Example: search_tools(query="fastq"). For several words use search_tools_by_keywords.
    Next: get_tool_details(tool_id, io_details=True) for inputs, then run_tool.
    """,
    "search_tools_by_keywords": """Find tools matching any keyword through Galaxy's tool search (name, id, help, ...).

    Returns tools [{id, name, description, version, matched_keywords, matched_in {keyword:
    [name|description|id|section|search index]}}], most keywords first, and count.
    Example: search_tools_by_keywords(keywords=["vcf", "filter"]).
    Next: get_tool_details(tool_id, io_details=True).
    """,
    "get_tool_panel": """The toolbox as Galaxy's tool panel shows it: nested sections and tool ids (can be large).

    view selects an admin-configured panel view. Errors: [VALIDATION_ERROR] unknown view.
    Next: get_tool_details(tool_id, io_details=True); search_tools(query) to narrow down.
    """,
    "get_tool_run_examples": """A tool's own test cases: requests it accepts, in Galaxy's flat form.

    Returns tool_version, requested_version, count, test_cases [{index, inputs (cond|param keys;
    data inputs name test files: pass your {src, id}), outputs, expect_failure?}].
    tool_version="*": every served version. Example: get_tool_run_examples(tool_id="sort1").
    Errors: [NOT_FOUND] unknown tool (search_tools). Next: get_tool_input_schema, run_tool.
    """,
    "get_tool_citations": """A tool's citations: tool_name, tool_version, citations [{type, content}] (DOIs, BibTeX).

    Errors: [NOT_FOUND] unknown tool. Next: get_tool_details(tool_id).
    """,
    "list_histories": """List your histories, newest first (by creation): histories [{id, name, update_time, ...}], count.

    Page with limit (default 50) and offset; name filters by substring.
    Example: list_histories(name="RNA-seq", limit=10).
    Next: get_history_contents(history_id); create_history(name); list_history_ids() for a lighter list.
    """,
    "list_history_ids": """List your histories as {id, name} pairs only (limit, default 100): the cheapest lookup of an id.

    Next: get_history_contents(history_id).
    """,
    "create_history": """Create an empty history named name; returns its id, name and update_time. Not idempotent.

    Example: create_history(name="RNA-seq sample A").
    Next: create_dataset_from_text or upload_file_from_url to add data; run_tool.
    """,
    "get_history_details": """A history's metadata and counts (name, size, count, state, state_details): no item listing.

    Errors: [NOT_FOUND] unknown history; [VALIDATION_ERROR] malformed id; [AUTHORIZATION_ERROR] not yours.
    Next: get_history_contents(history_id) for its datasets and collections.
    """,
    "get_history_contents": """A page of a history's datasets and collections (history_content_type says which), by hid.

    Returns contents [{id, hid, name, history_content_type, ...; datasets: state, extension}], pagination.
    state is the dataset's: a job that failed silently leaves an ok, empty one; its flags are the job's
    (wait_for_jobs(history_id=..., timeout_seconds=0)).
    order: hid-asc (default), hid-dsc, create_time-dsc, update_time-dsc, name-asc. deleted=true/visible=false
    list only deleted/hidden items (null: all).
    Example: get_history_contents(history_id="f2db41e1fa331b3e", order="hid-dsc", limit=20).
    Errors: [NOT_FOUND] unknown history; [AUTHORIZATION_ERROR] not yours.
    Next: peek_dataset_content(dataset_id) to read a dataset; get_collection_details(id) for a collection.
    """,
    "search_tools.query": "Text for Galaxy's tool search (name, id, description, help), e.g. \"fastq\", \"sort\".",
    "get_history_contents.deleted": "true: only deleted items; false: only undeleted ones; null: both.",
    "get_history_contents.visible": "false: only hidden items; true: only visible ones; null: both.",
    "create_history.name": "History name, e.g. \"RNA-seq sample A\".",
    "get_collection_details.max_elements": "Cap on elements listed (default 500).",
    "get_dataset_details": """A dataset's metadata: name, state, extension, file_size, genome_build, peek, misc_info.

    metadata_* null until finished; peek is a preview (peek_preview); permissions hold role ids.
    No content: read it with peek_dataset_content(dataset_id). Errors: [NOT_FOUND] unknown id;
    [AUTHORIZATION_ERROR] another user's private dataset.
    Next: peek_dataset_content(dataset_id); get_job_details(dataset_id) for the job that made it.
    """,
    "get_collection_details": """A collection's type, state and elements [{element_identifier, object id, state, ...}].

    max_elements caps the elements listed (default 500). object.peek is a 5-line preview (peek_preview).
    Errors: [NOT_FOUND] unknown collection; [AUTHORIZATION_ERROR] not yours.
    Next: run_tool with {"<input>": {"src": "hdca", "id": collection_id}} to map over it;
    peek_dataset_content(element dataset id).
    """,
    "upload_file_from_url": """Upload a file that Galaxy fetches from url into a history (an upload job). Not idempotent.

    Returns the upload job and the new dataset (id, hid, state, usually queued). file_type is a
    datatype extension or "auto"; an unknown one is refused with the closest valid names.
    Example: upload_file_from_url(history_id="f2db41e1fa331b3e", url="https://zenodo.org/.../reads.fastq.gz", file_type="fastqsanger.gz").
    Errors: [VALIDATION_ERROR] bad url or file_type; [AUTHORIZATION_ERROR] not your history;
    [CONFLICT] purged or archived history. For text you already have, use create_dataset_from_text.
    Next: wait_for_jobs(dataset_ids=[id]); peek_dataset_content(dataset_id).
    """,
    "list_workflows": """List your workflows (shared with you too by default): workflows [{id, name, tags, update_time}], count.

    search filters name/annotation; show_published adds published ones; page with limit/offset.
    Next: get_workflow_details(workflow_id); invoke_workflow.
    """,
    "get_workflow_details": """A workflow's steps, inputs (labels and indices), outputs and overridable parameters.

    version picks an older version (default latest). Errors: [NOT_FOUND] unknown workflow.
    Next: get_workflow_input_schema(workflow_id) for labels and accepted types; invoke_workflow.
    """,
    "get_invocations": """List workflow runs, filtered by workflow_id and/or history_id: invocations [{id, state, ...}], count.

    Next: get_invocation_details(invocation_id).
    """,
    "cancel_workflow_invocation": """Cancel a workflow run: finished steps stay, steps not yet run are skipped. Destructive.

    Returns the invocation with its new state. Errors: [NOT_FOUND] unknown invocation.
    Next: get_invocation_details(invocation_id).
    """,
    "search_iwc_workflows": """Search IWC's curated workflows (fetched from the IWC manifest online) by keywords or intent.

    Returns query, workflows [{trs_id, name, description, step_count, match_score, ...}], count (limit, default 10).
    Example: search_iwc_workflows(query="paired-end RNA-seq differential expression").
    Next: get_iwc_workflow_details(trs_id); import_workflow_from_iwc(trs_id).
    """,
    "get_iwc_workflow_details": """An IWC workflow's readme, inputs, outputs and tools, before importing it.

    trs_id looks like "#workflow/github.com/iwc-workflows/rnaseq-pe/main".
    Errors: [NOT_FOUND] trs_id not in the IWC manifest (search_iwc_workflows lists valid ones).
    Next: import_workflow_from_iwc(trs_id).
    """,
    "import_workflow_from_iwc": """Import an IWC workflow as your private workflow; returns id, name, trs_id, missing_tools. Not idempotent.

    A non-empty missing_tools means it will not run until an admin installs those tools.
    Errors: [NOT_FOUND] unknown trs_id. Next: get_workflow_details(id); invoke_workflow.
    """,
    "list_user_tools": """List your user-defined tools: tools [{id, uuid, tool_id, name, active}], count (active=false adds deactivated).

    Next: run_user_tool(history_id, tool_uuid, inputs).
    """,
    "create_user_tool": """Create a user-defined (containerized YAML) tool; returns id, uuid, tool_id, representation.

    representation: {"class": "GalaxyUserTool", "id", "version", "name", "container" (a string,
    e.g. from recommend_biocontainer), "shell_command" ($(inputs.x.path) for data inputs),
    "inputs": [{name, type}], "outputs": [{name, type: "data", format, from_work_dir}]}.
    Needs enable_beta_tool_formats and the user-tool role. Errors: [VALIDATION_ERROR] bad
    representation; [AUTHORIZATION_ERROR] not allowed on this server.
    Next: run_user_tool(history_id, tool_uuid=uuid, inputs).
    """,
    "delete_user_tool": """Deactivate a user-defined tool by uuid (past jobs are kept; it can no longer run). Destructive.

    Returns {uuid, deactivated: true}. Errors: [NOT_FOUND] unknown uuid.
    Next: list_user_tools(active=false) shows it deactivated.
    """,
    "run_user_tool": """Run a user-defined tool (by tool_uuid) in a history, like run_tool. Not idempotent.

    inputs: {"<input>": {"src": "hda", "id": "<dataset>"}} or plain values. Returns jobs and outputs.
    Errors: [NOT_FOUND] unknown uuid; [CONFLICT] deactivated tool; [VALIDATION_ERROR] bad inputs.
    Next: wait_for_jobs(job_ids=[...]); get_job_errors(job_id).
    """,
    "recommend_biocontainer": """Find a verified quay.io/biocontainers image for conda packages (queries quay.io).

    packages: ["samtools=1.17", "bwa"]. Returns image, found, match_quality, source, notes,
    verified (null when quay.io could not be reached).
    Next: create_user_tool with container=image.
    """,
    "list_file_source_templates": """The kinds of remote data sources an admin offers (S3, Dropbox, Zenodo, ...) as templates.

    Next: list_user_file_sources() for the ones you have configured.
    """,
    "list_user_file_sources": """Your configured remote file sources (instances of list_file_source_templates).

    Next: upload_file_from_url with a URL they serve.
    """,
}


#: The columns of a history's items an agent acts on, in the text table (structuredContent has all).
CONTENTS_COLUMNS = (
    "hid", "id", "name", "history_content_type", "state", "extension", "collection_type", "element_count",
    "populated_state", "visible", "deleted", "purged", "tags", "genome_build", "update_time",
)  # fmt: skip
#: The same for a collection's elements: Galaxy details each element's dataset in about 40 fields,
#: an HTML peek among them.
ELEMENT_COLUMNS = (
    "element_index", "element_identifier", "element_type", "object.id", "object.name", "object.state",
    "object.extension", "object.file_size", "object.misc_blurb", "object.misc_info", "object.deleted",
    "object.purged", "object.collection_type", "object.element_count", "object.populated",
)  # fmt: skip
#: Stock tools whose results can be large: their text block is a summary and a table, not the
#: whole result again as JSON (mcp.result_text; structuredContent is unchanged).
STOCK_TEXT = {
    "get_history_contents": Table("contents", columns=CONTENTS_COLUMNS),
    "get_collection_details": Table("collection", "elements", columns=ELEMENT_COLUMNS),
}
