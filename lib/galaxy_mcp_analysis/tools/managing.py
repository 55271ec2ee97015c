"""MCP declarations for managing what was run and made (operations in galaxy_mcp_analysis.operations.managing)."""

from typing import (
    Annotated,
    Any,
)

from pydantic import Field

from galaxy_mcp_analysis.mcp.declaration import analysis_tool
from galaxy_mcp_analysis.mcp.params import (
    DatasetId,
    HistoryId,
    JobId,
)

HistoryItems = Annotated[
    list[dict[str, Any]],
    Field(description='Items of history_id: [{"src": "hda"|"hdca", "id": "<encoded id>"}], at most 500.'),
]


@analysis_tool(title="List jobs", read_only=True, idempotent=True)
def list_jobs(
    ops,
    history_id: Annotated[HistoryId | None, Field(description="Only this history's jobs (yours or shared).")] = None,
    state: Annotated[str | None, Field(description="Only jobs in this state: ok, error, running, queued, paused, ...")] = None,
    tool_id: Annotated[str | None, Field(description="Only jobs of this tool id.")] = None,
    limit: Annotated[int, Field(description="Jobs per page, 1 to 500.")] = 50,
    offset: Annotated[int, Field(description="Jobs to skip, for paging.")] = 0,
) -> dict[str, Any]:
    """List your jobs, newest first: {jobs: [{job_id, tool_id, tool_version, state, exit_code, create_time,
    update_time, history_id, outputs: [{name, dataset_id|collection_id}], suspected_silent_failure}], total}.

    Without history_id: every job of yours. Example: list_jobs(history_id="f2db41e1fa331b3e", state="error").
    Errors: [VALIDATION_ERROR] unknown state (closest named), limit/offset out of range;
    [NOT_FOUND]/[AUTHORIZATION_ERROR] a history you cannot read.
    Next: get_job_errors(job_id) for failed or suspect jobs; get_job_parameters(job_id); rerun_job.
    """
    return ops.list_jobs(history_id=history_id, state=state, tool_id=tool_id, limit=limit, offset=offset)


@analysis_tool(title="Read a job's parameters", read_only=True, idempotent=True)
def get_job_parameters(ops, job_id: JobId) -> dict[str, Any]:
    """What a job actually ran with. Returns job_id, tool_id, tool_version, state, inputs (run_tool's shape:
    conditionals and sections nested, repeats as lists, datasets {"src": "hda", "id"}; re-runnable as is),
    parameters [{path, label, value}] (path is the flat name, usable in rerun_job's changes), datasets
    [{path, name, dataset_id}], outputs, rerunnable (false for uploads).

    Example: get_job_parameters(job_id="1cd8e2f6b131e891") -> {"tool_id": "Cut1", "inputs":
    {"columnList": "c1,c3", "delimiter": "T", "input": {"src": "hda", "id": "..."}}, ...}
    Errors: [NOT_FOUND] unknown job or uninstalled tool; [AUTHORIZATION_ERROR] another user's job.
    Next: rerun_job(job_id, changes={...}) to fix it; run_tool(history_id, tool_id, inputs).
    """
    return ops.get_job_parameters(job_id)


@analysis_tool(title="Rerun a job with changes", read_only=False, destructive=True)
def rerun_job(
    ops,
    job_id: JobId,
    changes: Annotated[
        dict[str, Any] | None,
        Field(description='Parameters to change, nested or flat: {"num_lines": 0}, {"cond|param": "x"}, '
                          '{"queries_0|input2": {"src": "hda", "id": "..."}}. Others keep their recorded values.'),
    ] = None,
    history_id: Annotated[HistoryId | None, Field(description="Where the new outputs go; default the job's history.")] = None,
    replace_outputs: Annotated[
        bool, Field(description="For a failed job: the new outputs replace the failed ones in the jobs paused on them.")
    ] = False,
) -> dict[str, Any]:
    """Run a job's tool again with its recorded inputs and your changes, through run_tool (checked like it).

    A new selector value of a conditional drops the old branch. replace_outputs is Galaxy's rerun of a failed
    job: the paused jobs waiting on its outputs then run on the new ones (destructive: they are rewired).
    Returns run_tool's result plus rerun_of, replaced_outputs and resumed_jobs (with replace_outputs).
    Example: rerun_job(job_id="1cd8e2f6b131e891", changes={"columnList": "c1,c2"}).
    Errors: [VALIDATION_ERROR] a change that does not fit (every one listed, nothing runs), upload jobs;
    [CONFLICT] replace_outputs on a job that did not fail; [AUTHORIZATION_ERROR] another user's job.
    Next: wait_for_jobs(job_ids) then peek_dataset_content on the new outputs.
    """
    return ops.rerun_job(job_id, changes=changes, history_id=history_id, replace_outputs=replace_outputs)


@analysis_tool(title="Cancel a job", read_only=False, destructive=True, idempotent=True)
def cancel_job(ops, job_id: JobId) -> dict[str, Any]:
    """Stop a job that has not finished (new, queued, running, paused...) as Galaxy's stop does: its outputs are
    discarded. Returns {job_id, previous_state, state} (deleting or deleted).

    Example: cancel_job(job_id="1cd8e2f6b131e891") -> {"previous_state": "running", "state": "deleting", ...}
    Errors: [CONFLICT] the job already finished (its state named); [AUTHORIZATION_ERROR] another user's job.
    Next: list_jobs(history_id, state="running"); rerun_job(job_id) to start it again.
    """
    return ops.cancel_job(job_id)


@analysis_tool(title="Update a dataset", read_only=False, idempotent=True)
def update_dataset(
    ops,
    dataset_id: DatasetId,
    name: Annotated[str | None, Field(description="New name.")] = None,
    file_type: Annotated[str | None, Field(description="New datatype extension (txt, tabular, bed, ...).")] = None,
    dbkey: Annotated[str | None, Field(description="Genome build, e.g. 'hg38'.")] = None,
    info: Annotated[str | None, Field(description="The dataset's info text.")] = None,
    annotation: Annotated[str | None, Field(description="Annotation (at most 2,000 bytes).")] = None,
    tags: Annotated[list[str] | None, Field(description="Replaces every tag; [] removes them all.")] = None,
    visible: Annotated[bool | None, Field(description="Show (true) or hide (false) it in the history.")] = None,
) -> dict[str, Any]:
    """Change your dataset's name, datatype, dbkey, info, annotation, tags or visibility: all or nothing.

    A file_type change is Galaxy's own (its set-metadata job regenerates columns etc.; the dataset reads
    setting_metadata until it ends). Returns get_dataset_details' result plus changed and metadata_job_id.
    Example: update_dataset(dataset_id="...", name="counts.tsv", file_type="tabular").
    Errors (nothing changes): [VALIDATION_ERROR] nothing given, unknown or unchangeable datatype (closest
    named); [CONFLICT] purged, or used by an unfinished job; [AUTHORIZATION_ERROR] not yours.
    Next: wait_for_jobs(job_ids=[metadata_job_id]); get_dataset_details(dataset_id).
    """
    return ops.update_dataset(
        dataset_id, name=name, file_type=file_type, dbkey=dbkey, info=info, annotation=annotation, tags=tags,
        visible=visible,
    )


@analysis_tool(title="Delete history items", read_only=False, destructive=True, idempotent=True)
def delete_history_items(
    ops,
    history_id: HistoryId,
    items: HistoryItems,
    purge: Annotated[bool, Field(description="Also free the disk space; cannot be undone.")] = False,
    recursive: Annotated[bool, Field(description="For collections: also delete (or purge) their datasets.")] = False,
) -> dict[str, Any]:
    """Delete datasets and collections of your history, all or nothing. Galaxy's delete (undo with
    restore_history_items); purge=true frees the space for good (a collection needs recursive=true).

    Returns {history_id, items: [{src, id, deleted, purged, visible}]} (purge_pending while Galaxy frees space).
    Example: delete_history_items(history_id="...", items=[{"src": "hda", "id": "..."}], purge=true).
    Errors (nothing changes): [AUTHORIZATION_ERROR] an item or the history is not yours; [NOT_FOUND]
    unknown id; [VALIDATION_ERROR] malformed items, an item of another history; [CONFLICT] still uploading.
    Next: get_history_contents(history_id); get_history_details for its size.
    """
    return ops.delete_history_items(history_id, items, purge=purge, recursive=recursive)


@analysis_tool(title="Restore deleted history items", read_only=False, idempotent=True)
def restore_history_items(ops, history_id: HistoryId, items: HistoryItems) -> dict[str, Any]:
    """Undelete datasets and collections of your history (a collection with its deleted datasets), all or
    nothing. Returns {history_id, items: [{src, id, deleted, purged, visible}]}.

    Example: restore_history_items(history_id="...", items=[{"src": "hdca", "id": "..."}]).
    Errors (nothing changes): [CONFLICT] a purged item; [AUTHORIZATION_ERROR] not yours; [NOT_FOUND]
    unknown id; [VALIDATION_ERROR] malformed items.
    Next: get_history_contents(history_id).
    """
    return ops.restore_history_items(history_id, items)
