"""MCP declarations for workflows an agent can check, follow and write (operations in
galaxy_mcp_analysis.operations.workflows)."""

from typing import (
    Annotated,
    Any,
)

from pydantic import Field

from galaxy_mcp_analysis.mcp.declaration import analysis_tool
from galaxy_mcp_analysis.mcp.params import HistoryId

WorkflowId = Annotated[str, Field(description="Encoded id of a stored workflow, e.g. from list_workflows.")]


@analysis_tool(title="Workflow inputs and settable parameters", read_only=True, idempotent=True)
def get_workflow_input_schema(
    ops,
    workflow_id: WorkflowId,
    version: Annotated[int | None, Field(description="Workflow version (0 = first); latest when omitted.")] = None,
    history_id: Annotated[
        HistoryId | None, Field(description="Resolves history-dependent options of step parameters.")
    ] = None,
) -> dict[str, Any]:
    """What a workflow takes: each input by label and the tool parameters each step lets you set.

    Returns workflow_id, name, version, inputs [{label, step_index, kind: dataset|collection|
    parameter, optional, datatypes, collection_type, type/default/options/min/max}], parameters
    [{step_index, label, tool_id, connected, schema}] (schema as get_tool_input_schema gives it),
    steps, and template: an invoke_workflow argument set keyed by input label, ready to edit.

    Example: get_workflow_input_schema(workflow_id="f2db41e1fa331b3e") -> {"inputs": [{"label":
    "table", "step_index": 0, "kind": "dataset", "datatypes": ["tabular"], ...}], "template":
    {"inputs": {"table": {"src": "hda", "id": "<dataset_id>"}}, "parameters": {}}, ...}

    Errors: [NOT_FOUND] unknown workflow or version; [AUTHORIZATION_ERROR] another user's
    private workflow. Next: check_workflow_inputs, then invoke_workflow.
    """
    return ops.get_workflow_input_schema(workflow_id, version=version, history_id=history_id)


@analysis_tool(title="Check workflow inputs (dry run)", read_only=True, idempotent=True)
def check_workflow_inputs(
    ops,
    workflow_id: WorkflowId,
    history_id: HistoryId,
    inputs: Annotated[
        dict[str, Any], Field(description="As invoke_workflow's inputs: keyed by input label or step index.")
    ],
    parameters: Annotated[
        dict[str, Any] | None, Field(description="Tool parameters per step, keyed by step label or step index.")
    ] = None,
    version: Annotated[int | None, Field(description="Workflow version; latest when omitted.")] = None,
) -> dict[str, Any]:
    """invoke_workflow's checks without invoking: a refused request is a successful check.

    Returns {valid, errors [{path, rule, message, suggestion, valid_values?}], resolved_inputs,
    inputs_by, mapped_over, steps [{step_index, label, tool_id, jobs_expected}]}. Checks: unknown
    input keys (closest labels), missing required inputs, a dataset given to a collection input,
    collection types Galaxy neither accepts nor maps over, datatypes not accepted or convertible,
    parameter values, and step parameters (unknown steps, unknown tool parameters, bad values).

    Example: check_workflow_inputs(workflow_id="f2db41e1fa331b3e", history_id="1cd8e2f6b131e891",
    inputs={"table": {"src": "hda", "id": "a799d38679e985db"}}, parameters={"sort": {"colum":
    "2"}}) -> {"valid": false, "errors": [{"path": "parameters.sort.colum", "rule":
    "unknown_parameter", ...}]}

    Errors: [NOT_FOUND]/[AUTHORIZATION_ERROR] for a workflow, history or item you cannot see.
    Next: invoke_workflow with the same arguments.
    """
    return ops.check_workflow_inputs(workflow_id, history_id, inputs, parameters=parameters, version=version)


@analysis_tool(title="Save a history's analysis as a workflow", read_only=False)
def create_workflow_from_history(
    ops,
    history_id: HistoryId,
    name: Annotated[str, Field(description="Name of the new workflow.")],
    job_ids: Annotated[
        list[str] | None,
        Field(description="Jobs to turn into steps; every finished tool job of the history when omitted."),
    ] = None,
    dataset_ids: Annotated[list[str] | None, Field(description="Encoded dataset ids to make workflow inputs.")] = None,
    collection_ids: Annotated[
        list[str] | None, Field(description="Encoded collection ids to make workflow inputs.")
    ] = None,
) -> dict[str, Any]:
    """Galaxy's "extract workflow from history": the analysis you ran becomes a reusable workflow.

    Mapped runs become one mapped step. Without dataset_ids/collection_ids, the inputs are what
    the jobs read and none of them made (uploads, pastes, collections you built), labelled after
    their names, made unique. Returns {workflow_id, name, inputs (as get_workflow_input_schema),
    steps [{step_index, label, type, tool_id}], definition}: the Format 2 document with no
    internal parameters or server paths; create_workflow accepts it back.

    Example: create_workflow_from_history(history_id="1cd8e2f6b131e891", name="Sort and count")
    -> {"workflow_id": "...", "inputs": [{"label": "samples", "kind": "collection", ...}], ...}

    Errors: [VALIDATION_ERROR] no finished tool jobs, a job or item of another history;
    [NOT_FOUND]; [AUTHORIZATION_ERROR] another user's history or job (nothing is created).
    Next: invoke_workflow(workflow_id, history_id, inputs={label: ...}) on new data.
    """
    return ops.create_workflow_from_history(
        history_id, name, job_ids=job_ids, dataset_ids=dataset_ids, collection_ids=collection_ids
    )


@analysis_tool(title="Create a workflow from a definition", read_only=False)
def create_workflow(
    ops,
    definition: Annotated[
        dict[str, Any] | str, Field(description="Format 2 (gxformat2) YAML text or object, or a native .ga object.")
    ],
    name: Annotated[str | None, Field(description="Name of the workflow; the definition's own when omitted.")] = None,
    dry_run: Annotated[bool, Field(description="Check only; save nothing.")] = False,
) -> dict[str, Any]:
    """Create a workflow from a Format 2 document (or .ga), after checking every step.

    Each tool step's state is checked like run_tool's inputs and every connection against the
    steps' outputs and inputs; all problems come at once in one [VALIDATION_ERROR] naming the step
    (label, else index) and path, e.g. steps.sort.state.colum, steps.count.in.input1. Parameters
    a step leaves out are stored at the tool's defaults. dry_run=True returns {valid, errors,
    inputs, steps} and saves nothing. Returns {workflow_id, name, inputs, steps}.

    Example: create_workflow(definition="class: GalaxyWorkflow\\ninputs:\\n  table: data\\nsteps:\\n
    sort:\\n    tool_id: sort1\\n    in: {input: table}\\n    state: {column: 2}\\n")

    Errors: [VALIDATION_ERROR] unreadable document, unknown tool, bad state or connection.
    Next: get_workflow_input_schema(workflow_id), invoke_workflow.
    """
    return ops.create_workflow(definition, name=name, dry_run=dry_run)


#: Stock tools whose behaviour this capability changes.
STOCK_DESCRIPTIONS = {
    "invoke_workflow": """Run a workflow on datasets of a history, after checking every input and step parameter.

    inputs are keyed by input label (or step index) as get_workflow_input_schema shows them:
    {"table": {"src": "hda", "id": "<dataset_id>"}}; collections {"src": "hdca", ...};
    parameter inputs take the value itself. A collection given to a dataset input maps the
    workflow over it (listed in mapped_over). parameters sets tool parameters per step, keyed
    by step label or index: {"sort": {"column": 2}}. Every problem is refused at once in one
    [VALIDATION_ERROR] with its path (unknown input or parameter with the closest names, missing
    input, wrong collection type or datatype, bad value); nothing is invoked then.
    Returns the invocation (id, state, history_id, ...) plus inputs_by and mapped_over.
    Errors: [NOT_FOUND], [AUTHORIZATION_ERROR] another user's private workflow or items.
    Next: wait_for_jobs(invocation_id=id), get_invocation_details(id) for progress.
    """,
    "get_invocation_details": """A workflow invocation's state and, in progress, how far it got step by step.

    progress: {state, terminal, steps [{step_index, label, tool_id, state, jobs {state: count},
    job_ids, outputs}], failed_steps [{step_index, label, job_ids}], silently_failed_steps,
    suspected_silent_failure}. terminal: scheduling ended and no job can still move (paused jobs
    wait on a failed input). Errors: [NOT_FOUND]; [AUTHORIZATION_ERROR] another user's invocation.
    Next: get_job_errors(job_id) for failed_steps; rerun_job(job_id, replace_outputs=True) lets
    paused steps continue; wait_for_jobs(invocation_id) to wait.
    """,
}
