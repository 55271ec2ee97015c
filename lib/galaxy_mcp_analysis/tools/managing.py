"""MCP declarations for managing what was run and made (operations in galaxy_mcp_analysis.operations.managing)."""

from typing import (
    Annotated,
    Any,
)

from pydantic import Field

from galaxy_mcp_analysis.core.tool_facts import (
    Item,
    RUN_EFFECTS,
    Runs,
)
from galaxy_mcp_analysis.mcp.declaration import analysis_tool
from galaxy_mcp_analysis.mcp.params import (
    CollectionId,
    DatasetId,
    HistoryId,
    JobId,
)
from galaxy_mcp_analysis.mcp.result_text import Table

HistoryItems = Annotated[
    list[dict[str, Any]], Field(description='[{"src": "hda"|"hdca", "id": "<id>"}] of history_id, at most 500.')
]


@analysis_tool(title="List jobs", read_only=True, idempotent=True, text=Table("jobs", inline=("parameters", "datasets")),
               example={"history_id": Item("history"), "limit": 5})
def list_jobs(
    ops,
    history_id: Annotated[HistoryId | None, Field(description="Only this history's jobs.")] = None,
    state: Annotated[str | None, Field(description="Only jobs in this state (ok, error, running, paused...).")] = None,
    tool_id: Annotated[str | None, Field(description="Only this tool's jobs.")] = None,
    limit: Annotated[int, Field(description="1 to 500.")] = 50,
    offset: Annotated[int, Field(description="Jobs to skip.")] = 0,
    include_parameters: Annotated[
        bool, Field(description="Add each job's parameters {path: value} and datasets {path: dataset_id}.")
    ] = False,
) -> dict[str, Any]:
    """List your jobs (or a readable history's), newest first: jobs [{job_id, tool_id, state, exit_code,
    create_time, history_id, outputs, suspected_silent_failure, failed_outputs (ids; an upload's output can
    fail after an ok job), replaced_by? (the job that took its outputs' places), ...}], total.
    include_parameters: what every job ran with in one call (paths as get_job_parameters').

    Example: list_jobs(history_id="...", state="error").
    Errors: [VALIDATION_ERROR] unknown state, bad limit/offset; [AUTHORIZATION_ERROR] history not readable.
    Next: get_job_errors(job_id); get_job_parameters(job_id); wait_for_jobs(history_id=...,
    timeout_seconds=0) lists a history's jobs with empty_outputs, evidence and repair in one call.
    """
    return ops.list_jobs(history_id=history_id, state=state, tool_id=tool_id, limit=limit, offset=offset,
                         include_parameters=include_parameters)


@analysis_tool(title="Read a job's parameters", read_only=True, idempotent=True,
               example={"job_id": Item("job")})
def get_job_parameters(ops, job_id: JobId) -> dict[str, Any]:
    """What a job ran with: inputs in run_tool's shape (re-runnable as is), parameters [{path, label, value}]
    (path: the flat name, usable in rerun_job's changes), datasets [{path, name, dataset_id}], outputs, rerunnable.

    Example: get_job_parameters(job_id="...") -> {"tool_id": "Cut1", "inputs": {"columnList": "c1",
    "input": {"src": "hda", "id": "..."}}, ...}
    Errors: [NOT_FOUND] unknown job or tool; [AUTHORIZATION_ERROR] another user's job.
    Next: rerun_job(job_id, changes); run_tool.
    """
    return ops.get_job_parameters(job_id)


@analysis_tool(title="Rerun a job with changes", read_only=False, destructive=True, starts_jobs=True,
               runs=Runs("job_id", "job"), effects=RUN_EFFECTS,
               example={"job_id": Item("job")})
def rerun_job(
    ops,
    job_id: JobId,
    changes: Annotated[
        dict[str, Any] | None,
        Field(description='Parameters to change, nested or flat ({"cond|param": 1}); the rest keep their values.'),
    ] = None,
    history_id: Annotated[HistoryId | None, Field(description="Default: the job's history.")] = None,
    replace_outputs: Annotated[
        bool,
        Field(description="Failed or ok job: new outputs take its outputs' places; paused jobs resume on them."),
    ] = False,
) -> dict[str, Any]:
    """Run a job's tool again on its recorded inputs with changes laid over them, checked as run_tool checks.

    A new conditional selector drops the old branch. Returns run_tool's result plus rerun_of; with
    replace_outputs, replaced (new outputs take the old ones' hid, name, visibility; old hidden),
    resumed_jobs (paused jobs rewired onto the new outputs).
    Example: rerun_job(job_id="...", changes={"columnList": "c1,c2"}).
    Errors (nothing runs): [VALIDATION_ERROR] changes that do not fit, an upload; [CONFLICT] replace_outputs
    on an unfinished job, or one whose outputs finished jobs read (paused ones resume); [AUTHORIZATION_ERROR] not yours.
    Next: wait_for_jobs(job_ids).
    """
    return ops.rerun_job(job_id, changes=changes, history_id=history_id, replace_outputs=replace_outputs)


@analysis_tool(title="Cancel a job", read_only=False, destructive=True, idempotent=True,
               effects={"changed": (("result.job_id", "job"),)},
               example={"job_id": Item("job")})
def cancel_job(ops, job_id: JobId) -> dict[str, Any]:
    """Stop a job that has not finished (new, queued, running, paused) as Galaxy does; its outputs are
    discarded. Returns {job_id, previous_state, state}.

    Example: cancel_job(job_id="...") -> {"previous_state": "queued", "state": "deleted", ...}
    Errors: [CONFLICT] already finished (state named); [AUTHORIZATION_ERROR] another user's job.
    Next: list_jobs(state="running"); rerun_job(job_id).
    """
    return ops.cancel_job(job_id)


@analysis_tool(title="Update a history", read_only=False, idempotent=True,
               effects={"changed": (("arguments.history_id", "history"),)},
               example={"history_id": Item("history"), "annotation": "example"})
def update_history(
    ops,
    history_id: HistoryId,
    name: Annotated[str | None, Field(description="At most 255 characters.")] = None,
    annotation: Annotated[str | None, Field(description='"" clears it.')] = None,
    tags: list[str] | None = None,
) -> dict[str, Any]:
    """Rename, annotate or tag your history, all or nothing; tags replaces every tag.
    Returns {history_id, name, annotation, tags, update_time, deleted, changed}.

    Example: update_history(history_id="...", name="AMR")
    Errors (nothing changes): [VALIDATION_ERROR] no field, bad name or tag; [CONFLICT] archived or
    purged; [AUTHORIZATION_ERROR] not yours. Next: get_history_details.
    """
    return ops.update_history(history_id, name=name, annotation=annotation, tags=tags)


@analysis_tool(title="Update a dataset", read_only=False, idempotent=True,
               effects={"changed": (("arguments.dataset_id", "dataset"),)},
               example={"dataset_id": Item("spare_dataset"), "name": "renamed"})
def update_dataset(
    ops,
    dataset_id: DatasetId,
    name: str | None = None,
    file_type: Annotated[str | None, Field(description="Datatype, e.g. tabular.")] = None,
    dbkey: Annotated[str | None, Field(description="Genome build, e.g. hg38.")] = None,
    info: str | None = None,
    annotation: str | None = None,
    tags: list[str] | None = None,
    visible: bool | None = None,
) -> dict[str, Any]:
    """Change your dataset's name, datatype, dbkey, info, annotation, tags or visibility, all or nothing.

    A file_type change is Galaxy's: its metadata job (metadata_job_id) regenerates columns etc. Returns
    get_dataset_details' result plus changed. tags replaces every tag.
    Example: update_dataset(dataset_id="...", name="t.tsv", file_type="tabular").
    Errors (nothing changes): [VALIDATION_ERROR] unknown datatype; [CONFLICT] purged, in use by a
    running job, or errored (names the fix); [AUTHORIZATION_ERROR] not yours.
    Next: wait_for_jobs(job_ids=[metadata_job_id]).
    """
    return ops.update_dataset(
        dataset_id, name=name, file_type=file_type, dbkey=dbkey, info=info, annotation=annotation, tags=tags,
        visible=visible,
    )


@analysis_tool(title="Update a collection", read_only=False, idempotent=True,
               effects={"changed": (("result.collection_id", "collection"),)},
               example={"collection_id": Item("collection"), "tags": ["example"]})
def update_collection(
    ops,
    collection_id: CollectionId,
    name: str | None = None,
    tags: list[str] | None = None,
    visible: bool | None = None,
) -> dict[str, Any]:
    """Rename, tag or hide your history collection, all or nothing (its datasets are not changed).

    tags replaces every tag. Returns the collection (collection_id, history_id, hid, name, tags, visible,
    deleted, element_count, ...) and changed.
    Example: update_collection(collection_id="...", name="trimmed reads", tags=["name:run1"]).
    Errors (nothing changes): [VALIDATION_ERROR] no field, empty name, bad tag, <>& in it;
    [NOT_FOUND]; [CONFLICT] purged; [AUTHORIZATION_ERROR] not yours.
    Next: get_collection_details(collection_id).
    """
    return ops.update_collection(collection_id, name=name, tags=tags, visible=visible)


@analysis_tool(title="Delete history items", read_only=False, destructive=True, idempotent=True, purges_with="purge",
               effects={"deleted": (("result.items[].id", "src"), ("result.deleted_items[].id", "src"))},
               example={"history_id": Item("history"), "items": [{"src": "hda", "id": Item("spare_dataset")}]})
def delete_history_items(
    ops,
    history_id: HistoryId,
    items: HistoryItems,
    purge: Annotated[bool, Field(description="Also free the space.")] = False,
    recursive: Annotated[bool, Field(description="Collections: their datasets too.")] = False,
) -> dict[str, Any]:
    """Delete datasets and collections of your history, all or nothing; restore_history_items undoes it.
    purge frees the space for good (a collection needs recursive), in a background task: purge_pending.

    Returns {history_id, items: [{src, id, deleted, purged, visible}], deleted_items [{src, id}]
    (recursive: their datasets too), purged_items [{src, id, pending}]}.
    Example: delete_history_items(history_id="...", items=[{"src": "hda", "id": "..."}])
    Errors (nothing changes): [AUTHORIZATION_ERROR] not yours; [NOT_FOUND]; [VALIDATION_ERROR] malformed
    or elsewhere; [CONFLICT] uploading.
    Next: get_history_contents(history_id).
    """
    return ops.delete_history_items(history_id, items, purge=purge, recursive=recursive)


@analysis_tool(title="Restore history items", read_only=False, idempotent=True,
               effects={"changed": (("result.items[].id", "src"),)},
               example={"history_id": Item("history"), "items": [{"src": "hda", "id": Item("spare_dataset")}]})
def restore_history_items(ops, history_id: HistoryId, items: HistoryItems) -> dict[str, Any]:
    """Undelete datasets and collections of your history (a collection with its datasets), all or nothing.
    Returns {history_id, items: [{src, id, deleted, purged, visible}]}.

    Example: restore_history_items(history_id="...", items=[{"src": "hdca", "id": "..."}]).
    Errors (nothing changes): [CONFLICT] purged; [AUTHORIZATION_ERROR] not yours; [NOT_FOUND].
    Next: get_history_contents(history_id).
    """
    return ops.restore_history_items(history_id, items)
