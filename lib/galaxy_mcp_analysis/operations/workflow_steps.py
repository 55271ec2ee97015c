"""Galaxy's side of ``core.workflow_steps``: label an extracted workflow's steps and results, and
read the values a saved step runs with.

Labels and workflow outputs are written through Galaxy's model (``WorkflowStep.label``,
``WorkflowStep.create_or_update_workflow_output``), as the workflow editor saves them; the values
a step keeps are read by Galaxy's own workflow module for the step (``module_factory``), the same
state an invocation starts from.
"""

from typing import Any

from galaxy.exceptions import ToolMissingException
from galaxy.tools.parameters.workflow_utils import is_runtime_value
from galaxy.workflow.modules import module_factory

from galaxy_mcp_analysis.core.flat_names import flat_name
from galaxy_mcp_analysis.core.workflow_steps import (
    output_labels,
    step_labels,
    terminal_outputs,
    ToolStepShape,
)
from galaxy_mcp_analysis.operations.jobs.recorded_state import RecordedState


def label_steps_and_outputs(workflow, toolbox, user) -> bool:
    """Give every unlabelled tool step a unique label and mark the outputs no step reads as labelled
    workflow outputs. Returns whether anything changed (the caller commits)."""
    tool_steps = [step for step in workflow.steps if step.type == "tool"]
    shapes = []
    for step in tool_steps:
        tool = toolbox.get_tool(step.tool_id, step.tool_version, user=user)
        connections = sorted(step.input_connections, key=lambda connection: connection.input_name)
        shapes.append(
            ToolStepShape(
                order_index=step.order_index,
                tool_name=(tool.name if tool is not None else None) or step.tool_id,
                outputs=list(tool.outputs) if tool is not None else [],
                sources=[connection.output_step.order_index for connection in connections],
            )
        )
    known = {step.order_index: step.label for step in workflow.steps if step.label}
    made = step_labels(shapes, known)
    by_index = {step.order_index: step for step in tool_steps}
    for index, label in made.items():
        by_index[index].label = label
    consumed = {
        (connection.output_step.order_index, connection.output_name)
        for step in workflow.steps
        for connection in step.input_connections
    }
    marked = [
        (index, name) for index, name in terminal_outputs(shapes, consumed) if not by_index[index].workflow_outputs
    ]
    labels = {**known, **made}
    for (index, name), label in output_labels(marked, labels).items():
        by_index[index].create_or_update_workflow_output(output_name=name, label=label, uuid=None)
    return bool(made or marked)


def maps_of_given_collections(trans, steps, given: dict) -> dict[int, int]:
    """Jobs of each tool step that maps over a collection given whole to a workflow input it reads
    (``given``: input step order_index -> collection): one per dataset for a dataset input, one per
    element for a collection input of an inner type; 0 where the step takes the collection whole."""
    sizes: dict[int, int] = {}
    for step in steps:
        sources = [c for c in step.input_connections if step.type == "tool" and c.output_step.order_index in given]
        if not sources:
            continue
        try:
            module = module_factory.from_workflow_step(trans, step)
        except ToolMissingException:  # reported by the step checks; no count to give
            continue
        accepted = {entry["name"]: entry for entry in module.get_data_inputs()}
        for connection in sources:
            collection, wanted = given[connection.output_step.order_index], accepted.get(connection.input_name)
            if wanted is None or wanted.get("multiple"):
                continue
            if wanted["input_type"] == "dataset":
                size = len(collection.dataset_instances)
            elif wanted.get("collection_types") and collection.collection_type not in wanted["collection_types"]:
                size = collection.element_count or 0
            else:
                continue
            sizes[step.order_index] = max(size, sizes.get(step.order_index, 0))
    return sizes


class _SavedStepState(RecordedState):
    """A saved step's state as run_tool-shaped values. Data inputs are connections and values set at
    run time come from the invocation: neither is a saved value, so both are left out."""

    def __init__(self, app, encode_id):
        super().__init__(app, encode_id)
        self.not_saved: set[str] = set()

    def walk(self, inputs: dict, values: dict, prefix: str = "") -> dict[str, Any]:
        state = super().walk(inputs, values, prefix)
        return {name: value for name, value in state.items() if flat_name(prefix, name) not in self.not_saved}

    def _data(self, parameter, value: Any, path: str) -> Any:
        self.not_saved.add(path)
        return None

    def _plain(self, parameter, value: Any, path: str) -> Any:
        if is_runtime_value(value):
            self.not_saved.add(path)
            return None
        return super()._plain(parameter, value, path)


def saved_step_values(trans, step) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """What a tool step of a saved workflow runs with unless the invocation says otherwise: the
    run_tool-shaped values and a ``[{path, label, value}]`` list. Empty when the tool is missing."""
    module = module_factory.from_workflow_step(trans, step)
    tool = getattr(module, "tool", None)
    if tool is None or module.state is None:
        return {}, []
    saved = _SavedStepState(trans.app, trans.security.encode_id)
    values = saved.walk(tool.inputs, module.state.inputs)
    return values, saved.parameters


def _pinned_version_served(toolbox, step) -> bool:
    """Whether the toolbox serves the step's tool id at its pinned version: Galaxy's workflow module
    then picks that very tool (its ``get_tool`` answers an exact id and version before any lineage
    search), so building the module and recovering the step's state would learn nothing. A step that
    names a tool by uuid (a user-defined tool) is left to the module."""
    if step.tool_uuid:
        return False
    tool_id = step.effective_tool_id
    tool = toolbox.get_tool(tool_id, tool_version=step.tool_version, exact=True)
    return tool is not None and tool.id == tool_id and str(tool.version) == str(step.tool_version)


def version_change(trans, step, served_versions) -> dict[str, Any] | None:
    """What Galaxy runs for a tool step pinned to a version this server lacks: Galaxy's own workflow module
    for the step (``module_factory``, as an invocation builds it) picks the tool along its lineage, the
    newest version served, and runs that one. None when the pinned version is served (or none is pinned:
    then the module is not built, ``_pinned_version_served``);
    ``served_versions(tool_id)``: the versions served, oldest first."""
    if step.type != "tool" or not step.tool_version:
        return None
    if _pinned_version_served(trans.app.toolbox, step):
        return None
    try:
        module = module_factory.from_workflow_step(trans, step)
    except ToolMissingException:
        module = None
    tool = getattr(module, "tool", None)
    runs = str(tool.version) if tool is not None else None
    if runs == str(step.tool_version):
        return None
    served = served_versions(step.tool_id)
    return {
        "step_index": step.order_index,
        "label": step.label,
        "tool_id": step.tool_id,
        "pinned_version": step.tool_version,
        "runs_version": runs,
        "served_versions": served,
        "galaxy_will": (f"run version {runs} instead (Galaxy's newest along the tool's lineage)" if runs
                        else "not run this step: the tool is not installed"),
    }
