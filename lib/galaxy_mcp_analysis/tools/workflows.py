"""MCP declarations for workflows an agent can check, follow and write (operations in
galaxy_mcp_analysis.operations.workflows)."""

from typing import (
    Annotated,
    Any,
)

from pydantic import Field

from galaxy_mcp_analysis.core.tool_facts import Item
from galaxy_mcp_analysis.mcp.declaration import analysis_tool
from galaxy_mcp_analysis.mcp.params import HistoryId
from galaxy_mcp_analysis.mcp.result_text import Table

WorkflowId = Annotated[str, Field(description="Workflow id (list_workflows).")]


@analysis_tool(
    title="Workflow inputs and settable parameters",
    read_only=True,
    idempotent=True,
    # Steps running the same tool repeat its whole schema: the text block writes each once.
    text=Table("parameters", once=("schema",)),
    example={"workflow_id": Item("workflow")},
)
def get_workflow_input_schema(
    ops,
    workflow_id: WorkflowId,
    version: int | None = None,
    history_id: str | None = None,
) -> dict[str, Any]:
    """A workflow's inputs by label (kind, optional, datatypes, collection_type, type, default,
    options), the tool parameters each step lets you set (schema), and an invoke_workflow template.

    Example: -> {"inputs": [{"label": "table", "kind": "dataset", "datatypes": ["tabular"]}], ...}
    Errors: [NOT_FOUND], [AUTHORIZATION_ERROR]. Next: check_workflow_inputs.
    """
    return ops.get_workflow_input_schema(workflow_id, version=version, history_id=history_id)


@analysis_tool(title="Check workflow inputs (dry run)", read_only=True, idempotent=True,
               example={"workflow_id": Item("workflow"), "history_id": Item("history"),
                        "inputs": {"table": {"src": "hda", "id": Item("dataset")}}})
def check_workflow_inputs(
    ops,
    workflow_id: WorkflowId,
    history_id: HistoryId,
    inputs: Annotated[dict[str, Any], Field(description="As invoke_workflow's.")],
    parameters: Annotated[dict[str, Any] | None, Field(description="As invoke_workflow's.")] = None,
    version: int | None = None,
) -> dict[str, Any]:
    """invoke_workflow's checks without invoking: {valid, errors [{path, rule, message}],
    resolved_inputs (defaults too), defaulted_inputs, inputs_by, mapped_over, steps [{label, jobs_expected}]}.

    Example: parameters={"sort": {"colum": 2}} -> errors [{"path": "parameters.sort.colum", ...}]
    Errors: [NOT_FOUND], [AUTHORIZATION_ERROR]. Next: invoke_workflow.
    """
    return ops.check_workflow_inputs(workflow_id, history_id, inputs, parameters=parameters, version=version)


@analysis_tool(title="Save a history's analysis as a workflow", read_only=False,
               effects={"created": (("result.workflow_id", "workflow"),)},
               example={"history_id": Item("history"), "name": "example"})
def create_workflow_from_history(
    ops,
    history_id: HistoryId,
    name: str,
    job_ids: Annotated[list[str] | None, Field(description="Default: every finished tool job.")] = None,
    dataset_ids: Annotated[
        list[str] | None, Field(description="Inputs to take; default: what the jobs read and none made.")
    ] = None,
    collection_ids: Annotated[
        list[str] | None, Field(description="As dataset_ids, for collections.")
    ] = None,
    input_labels: Annotated[
        dict[str, str] | None, Field(description="Input id -> label; default: the item's name.")
    ] = None,
) -> dict[str, Any]:
    """Save what a history ran as a workflow (a mapped run is one step, its input a list input: wrap
    one sample as a one-element list). Inputs accept any datatype.
    Returns {workflow_id, inputs, steps, definition}.

    Example: create_workflow_from_history(history_id="1cd8e2f6b131e891", name="Sort",
    input_labels={"<collection id>": "isolates"})
    Errors: [VALIDATION_ERROR], [AUTHORIZATION_ERROR]. Next: invoke_workflow.
    """
    return ops.create_workflow_from_history(
        history_id, name, job_ids=job_ids, dataset_ids=dataset_ids, collection_ids=collection_ids,
        input_labels=input_labels,
    )


@analysis_tool(title="Create a workflow from a definition", read_only=False,
               effects={"created": (("result.workflow_id", "workflow"),)},
               example={"definition": {"class": "GalaxyWorkflow", "inputs": {"t": "data"},
                                       "steps": {"c": {"tool_id": "cat1", "in": {"input1": "t"}}}}})
def create_workflow(
    ops,
    definition: Annotated[dict[str, Any] | str, Field(description="Format 2 (YAML or object) or .ga.")],
    name: str | None = None,
    dry_run: Annotated[bool, Field(description="Check only.")] = False,
) -> dict[str, Any]:
    """Create a workflow from Format 2 or .ga; tool states (as run_tool's inputs) and connections are
    checked first, all problems at once by path. Returns {workflow_id, inputs, steps}; dry_run:
    {valid, errors}.

    Example: definition={"class": "GalaxyWorkflow", "inputs": {"t": "data"}, "steps": {...}}
    Errors: [VALIDATION_ERROR]. Next: invoke_workflow.
    """
    return ops.create_workflow(definition, name=name, dry_run=dry_run)


@analysis_tool(title="Delete a workflow", read_only=False, destructive=True, idempotent=True,
               effects={"deleted": (("result.workflow_id", "workflow"),)},
               example={"workflow_id": Item("spare_workflow")})
def delete_workflow(ops, workflow_id: WorkflowId) -> dict[str, Any]:
    """Delete a workflow you own (it leaves list_workflows; its invocations stay).
    Undo: restore_workflow(workflow_id). Returns {workflow_id, name, deleted, published}.
    Errors: [AUTHORIZATION_ERROR] not yours (shared or published too); [NOT_FOUND].
    Next: list_workflows(search="is:deleted").
    """
    return ops.delete_workflow(workflow_id)


@analysis_tool(title="Restore a workflow", read_only=False, idempotent=True,
               effects={"changed": (("result.workflow_id", "workflow"),)},
               example={"workflow_id": Item("spare_workflow")})
def restore_workflow(ops, workflow_id: WorkflowId) -> dict[str, Any]:
    """Undelete a workflow you own. Returns {workflow_id, name, deleted, published}.
    Errors: [AUTHORIZATION_ERROR] not yours; [NOT_FOUND]. Next: invoke_workflow.
    """
    return ops.restore_workflow(workflow_id)


#: Stock tools whose behaviour this capability changes (their entries in tools/stock.py are replaced).
STOCK_DESCRIPTIONS = {
    "invoke_workflow": """Run a workflow; every input and step parameter is checked first.

    inputs by label or step index: {"table": {"src": "hda", "id": "<id>"}}; a collection on a
    dataset input maps over it. parameters likewise: {"sort": {"column": 2}}. Problems come
    in one [VALIDATION_ERROR] with paths; nothing is invoked. Adds inputs_by, mapped_over.
    Next: wait_for_jobs(invocation_id=id); get_invocation_details(id).
    """,
    "invoke_workflow.parameters": "Tool parameters keyed by step label or index.",
    "get_invocation_details": """A workflow run's state and, in progress, each step's job states.

    progress: {state, terminal, steps [{label, state, jobs, job_ids, outputs}], failed_steps}. Read
    progress: Galaxy's own steps list no jobs or outputs for a mapped step.
    Errors: [NOT_FOUND]. Next: get_job_errors(job_id) for failed_steps; rerun_job.
    """,
}
