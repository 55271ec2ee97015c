"""Reading a workflow's inputs: ``get_workflow_input_schema``, each input step's entry and template value,
each tool step's parameters (the tool-input capability's schema, defaults set to the step's saved values).
"""

from typing import Any

from galaxy_mcp_analysis.core.errors import AnalysisError
from galaxy_mcp_analysis.core.workflow_steps import schema_with_saved_defaults
from galaxy_mcp_analysis.core.workflows import INPUT_KINDS
from galaxy_mcp_analysis.operations.workflow_steps import saved_step_values
from galaxy_mcp_analysis.operations.workflows.common import (
    _listify,
    _option_value,
    _ordered_steps,
)


class WorkflowInputSchema:
    """A workflow's inputs and step parameters as an agent fills them in, a mixin of ``Workflows``."""

    def get_workflow_input_schema(
        self, workflow_id: str, version: int | None = None, history_id: str | None = None
    ) -> dict[str, Any]:
        stored, workflow = self.accessible_workflow(workflow_id, version)
        steps = _ordered_steps(workflow)
        inputs = [self._input_entry(step) for step in steps if step.type in INPUT_KINDS]
        parameters = [self._step_parameters_entry(step, history_id) for step in steps if step.type == "tool"]
        template_inputs = {entry["label"] or str(entry["step_index"]): _placeholder(entry) for entry in inputs}
        return {
            "workflow_id": workflow_id,
            "name": stored.name,
            "version": version if version is not None else len(stored.workflows) - 1,
            "inputs": inputs,
            "parameters": parameters,
            "steps": [_step_summary(step) for step in steps],
            "template": {"inputs": template_inputs, "parameters": {}},
        }

    def _input_entry(self, step) -> dict[str, Any]:
        state = step.tool_inputs or {}
        kind = INPUT_KINDS[step.type]
        entry: dict[str, Any] = {
            "label": step.effective_label,
            "step_index": step.order_index,
            "kind": kind,
            "optional": bool(step.input_optional),
        }
        if kind in ("dataset", "collection"):
            entry["datatypes"] = list(_listify(state.get("format"))) or ["data"]
        if kind == "collection":
            entry["collection_type"] = state.get("collection_type") or "list"
        if kind == "parameter":
            entry["type"] = state.get("parameter_type", "text")
            if "default" in state:
                entry["default"] = state["default"]
            for key in ("min", "max", "multiple"):
                if state.get(key) not in (None, ""):
                    entry[key] = state[key]
            if state.get("restrictions"):
                entry["options"] = [_option_value(option) for option in state["restrictions"]]
            elif state.get("suggestions"):
                entry["suggestions"] = [_option_value(option) for option in state["suggestions"]]
        if step.annotations:
            entry["annotation"] = step.annotations[0].annotation
        return entry

    def _step_parameters_entry(self, step, history_id: str | None) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "step_index": step.order_index,
            "label": step.label,
            "tool_id": step.tool_id,
            "tool_version": step.tool_version,
            "connected": sorted({connection.input_name for connection in step.input_connections}),
        }
        entry.update(self._step_tool_schema(step.tool_id, step.tool_version, history_id))
        # What the saved step runs with, and the schema's defaults set to it: never a tool default it overrides.
        values, entry["saved"] = saved_step_values(self.trans, step)
        if entry.get("schema") and values:
            entry["schema"] = schema_with_saved_defaults(entry["schema"], values)
        return entry

    def _step_tool_schema(self, tool_id: str, tool_version: str | None, history_id: str | None) -> dict[str, Any]:
        """The step's tool schema, from the tool-input capability (a mixin of the same manager)."""
        try:
            described = self.get_tool_input_schema(tool_id, tool_version=tool_version, history_id=history_id)
        except AnalysisError as e:
            return {"schema": None, "schema_unavailable": e.message}
        return {"schema": described.get("schema"), "modelled": described.get("modelled", True)}


def _step_summary(step) -> dict[str, Any]:
    return {"step_index": step.order_index, "label": step.effective_label, "type": step.type, "tool_id": step.tool_id,
            "tool_version": step.tool_version}


def _placeholder(entry: dict[str, Any]) -> Any:
    if entry["kind"] == "dataset":
        return {"src": "hda", "id": "<dataset_id>"}
    if entry["kind"] == "collection":
        return {"src": "hdca", "id": f"<{entry.get('collection_type', 'list')} collection_id>"}
    if "default" in entry:
        return entry["default"]
    if entry.get("options"):
        return entry["options"][0]
    return {"integer": 0, "float": 0.0, "boolean": False}.get(entry.get("type"), "")
