"""MCP declarations for debugging jobs (operations in the galaxy_mcp_analysis.operations.jobs package)."""

from typing import (
    Annotated,
    Any,
)

from pydantic import Field

from galaxy_mcp_analysis.core.tool_facts import Item
from galaxy_mcp_analysis.mcp.declaration import analysis_tool
from galaxy_mcp_analysis.mcp.params import (
    DatasetId,
    HistoryId,
    JobId,
)
from galaxy_mcp_analysis.mcp.progress import progress_reporter
from galaxy_mcp_analysis.mcp.result_text import RawText


@analysis_tool(
    title="Read a job's errors and logs",
    read_only=True,
    idempotent=True,
    toolsets=("core",),
    text=RawText("tool_stderr", "tool_stdout", "job_stderr", "job_stdout", "command_line", "info"),
    example={"job_id": Item("job")},
)
def get_job_errors(
    ops,
    job_id: Annotated[JobId | None, Field(description="The job to read; pass this or dataset_id.")] = None,
    dataset_id: Annotated[DatasetId | None, Field(description="Reads the job that created this dataset.")] = None,
    max_bytes: Annotated[
        int, Field(description="Bytes per log (>= 256); the server caps it.")
    ] = 4000,
) -> dict[str, Any]:
    """Read why a job failed, or finished ok with empty outputs: its logs, exit code and output check.

    Pass exactly one of job_id or dataset_id. Returns job_id, tool_id, tool_version, state,
    exit_code, info, tool_stderr/tool_stdout (the tool's), job_stderr/job_stdout (Galaxy's),
    job_messages, truncated, empty_outputs [{name, dataset_id, size, may_be_empty, why}],
    evidence? {exit_code, tool_stderr_bytes, job_messages, input_sizes}, suspected_silent_failure
    (ok job that wrote stderr or warned, a required output 0 bytes; empty alone is no failure), outputs
    [{name, dataset_id, state, message?}] and failed_outputs (an output can fail after an ok job),
    repair? (a call that can fix it) or no_repair? (why none can) or replaced_by? (the job that took its outputs'
    places: nothing left to do), command_line where Galaxy shows it. Long logs keep head and tail.
    Errors: [VALIDATION_ERROR] both or neither id given, max_bytes < 256; [NOT_FOUND] unknown
    id; [AUTHORIZATION_ERROR] another user's job or private dataset (nothing of it is shown).
    Next: peek_dataset_content (a suspect output or input), get_job_parameters, the repair.
    """
    return ops.get_job_errors(job_id=job_id, dataset_id=dataset_id, max_bytes=max_bytes)


@analysis_tool(title="Wait for jobs to finish", read_only=True, idempotent=True, toolsets=("core",),
               example={"job_ids": [Item("job")], "timeout_seconds": 0})
def wait_for_jobs(
    ops,
    job_ids: Annotated[list[str] | None, Field(description="Encoded job ids, e.g. every id in run_tool's `jobs`.")] = None,
    dataset_ids: Annotated[
        list[str] | None, Field(description="Output dataset ids; waits for the jobs that make them.")
    ] = None,
    history_id: Annotated[HistoryId | None, Field(description="Waits for every unfinished job of this history.")] = None,
    timeout_seconds: Annotated[
        int, Field(description="Seconds (>= 0; 0 checks once); the server caps it, 120 s by default.")
    ] = 60,
    invocation_id: Annotated[
        str | None, Field(description="Waits until this invocation is scheduled and its jobs finished.")
    ] = None,
    since_seconds: Annotated[
        int, Field(description="With history_id: list its jobs ended this many seconds before (0 to 604800).")
    ] = 600,
) -> dict[str, Any]:
    """Wait until jobs finish or the timeout passes; one call instead of polling get_job_status.

    Name jobs by job_ids, dataset_ids, invocation_id and/or history_id. A history adds
    pending_at_call, recently_finished (ended in the since_seconds before the call), paused? (its
    paused jobs, whatever their age), history_state_counts (job states of all three, replaced jobs too),
    needs_attention (what Galaxy or the tool flagged: failed, flagged or failed_outputs jobs not replaced or
    purged; a wrong result of an ok job is not) and nothing_pending; an
    invocation adds invocation_scheduled, invocation_outputs [{step_index, label, output_name, src, id}].
    Finished: ok, error, failed, deleted, stopped, skipped, paused (with paused_reason, resume_with). Returns jobs [{job_id,
    tool_id, state, exit_code, suspected_silent_failure, empty_outputs?, evidence?, failed_outputs?,
    tool_stderr_head?, repair?, no_repair?, recreate?, replaced_by?, recreated_by?, removed?}], all_terminal,
    timed_out, state_counts (of jobs, not recently_finished),
    waited_seconds, timeout_applied, capped, server_busy?. Call again while timed_out;
    progressToken gets notifications/progress.
    Errors: [VALIDATION_ERROR] no ids, timeout_seconds < 0, over 500 ids; [NOT_FOUND] and
    [AUTHORIZATION_ERROR] for an id you cannot see (checked before waiting).
    Next: get_job_errors (a job's whole log); the repair; peek_datasets_content.
    """
    return ops.wait_for_jobs(
        job_ids=job_ids,
        dataset_ids=dataset_ids,
        history_id=history_id,
        timeout_seconds=timeout_seconds,
        invocation_id=invocation_id,
        progress=progress_reporter(),
        since_seconds=since_seconds,
    )


#: Stock Galaxy tools whose descriptions mislead agents; replaced through FastMCP transforms.
STOCK_DESCRIPTIONS = {
    "get_job_status": """One job's state, tool, exit code, parameters and outputs, and whether it finished empty.

    Returns {"job": {id, state, exit_code, tool_id, params, inputs, outputs, ...}, "job_id",
    "empty_outputs", "evidence"?, "suspected_silent_failure"} as get_job_errors.
    Does not wait (use wait_for_jobs).
    Errors: [NOT_FOUND] unknown job; [AUTHORIZATION_ERROR] another user's job.
    Next: get_job_errors(job_id) for logs; peek_dataset_content(dataset_id).
    """,
    "get_job_details": """The job that created a dataset: {dataset_id, job_id, job: {tool_id, tool_version, state, times}}.

    No parameters, logs or exit code: it only leads from an output to its job.
    Errors: [NOT_FOUND] unknown dataset; [AUTHORIZATION_ERROR] another user's private dataset.
    Next: get_job_errors(dataset_id=...) for stderr/stdout; get_job_status(job_id) for parameters.
    """,
}
