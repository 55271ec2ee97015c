"""Writing a workflow from a definition: ``create_workflow`` reads Format 2 or a native .ga object, checks
every tool step's state and every connection at once (``dry_run`` stops there), then has Galaxy save it.
"""

import json
from typing import Any

import yaml
from galaxy import exceptions
from galaxy.managers.workflows import (
    RawWorkflowDescription,
    WorkflowCreateOptions,
)
from galaxy.workflow.modules import module_factory

from galaxy_mcp_analysis.core.errors import (
    AnalysisError,
    ErrorCode,
)
from galaxy_mcp_analysis.core.flat_names import (
    flat_name,
    repeat_block,
)
from galaxy_mcp_analysis.core.input_problems import (
    BAD_CONNECTION,
    closest_names,
    InputProblem,
    INVALID_VALUE,
    listed,
    problems_error,
    UNKNOWN_STEP,
)
from galaxy_mcp_analysis.core.workflows import (
    GALAXY_RUNTIME_KEYS,
    INPUT_KINDS,
)
from galaxy_mcp_analysis.operations.workflows.common import _listify


#: Format 2 values standing for "connected" or "set at run time" in a tool state.
RUNTIME_VALUE_CLASSES = ("ConnectedValue", "RuntimeValue")


class WorkflowDefinitions:
    """A workflow document checked and saved, a mixin of ``Workflows``."""

    def create_workflow(self, definition: Any, name: str | None = None, dry_run: bool = False) -> dict[str, Any]:
        as_dict = _parse_definition(definition)
        if name:
            as_dict["name"] = name
            if as_dict.get("class") == "GalaxyWorkflow":
                as_dict["label"] = name
        format2_steps = _format2_steps(as_dict)
        try:
            raw = self.app.workflow_contents_manager.normalize_workflow_format(self.trans, as_dict)
        except (exceptions.MessageException, ValueError, KeyError, TypeError, AttributeError) as e:
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                f"definition is not a workflow Galaxy can read: {str(e)[:300]}",
                "Send a Format 2 document (class: GalaxyWorkflow, inputs, steps with tool_id, in and state) "
                "or a native .ga object; create_workflow_from_history returns one to start from.",
            ) from None
        native = raw.as_dict
        if "name" not in native or not native.get("name"):
            native["name"] = name or as_dict.get("label") or "Unnamed workflow"
        problems, steps, inputs = self._definition_problems(native, format2_steps)
        if dry_run:
            return {"valid": not problems, "errors": [p.as_dict() for p in problems], "inputs": inputs, "steps": steps}
        if problems:
            raise problems_error(
                problems,
                "create_workflow",
                nothing_done="No workflow was created.",
                suggestion="Fix every path listed and call again; "
                "create_workflow(..., dry_run=True) checks without saving.",
            )
        created = self.app.workflow_contents_manager.build_workflow_from_raw_description(
            self.trans, RawWorkflowDescription(native), WorkflowCreateOptions(fill_defaults=True)
        )
        if created.missing_tools:
            missing = ", ".join(str(tool[0]) for tool in created.missing_tools)
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                f"Tools not installed: {missing}.",
                "Use tools this server has (search_tools).",
            )
        workflow_id = self.trans.security.encode_id(created.stored_workflow.id)
        schema = self.get_workflow_input_schema(workflow_id)
        return {
            "workflow_id": workflow_id,
            "name": created.stored_workflow.name,
            "inputs": schema["inputs"],
            "steps": schema["steps"],
        }

    def _definition_problems(
        self, native: dict, format2_steps: dict[int, dict]
    ) -> tuple[list[InputProblem], list, list]:
        """Every tool step's state and every connection of a native workflow dict, checked at once."""
        problems: list[InputProblem] = []
        raw_steps = native.get("steps") or {}
        step_dicts = (
            {int(key): value for key, value in raw_steps.items()}
            if isinstance(raw_steps, dict)
            else dict(enumerate(raw_steps))
        )
        modules: dict[int, Any] = {}
        names: dict[int, str] = {}
        steps_out, inputs_out = [], []
        for key in sorted(step_dicts):
            step_dict = step_dicts[key]
            label = step_dict.get("label")
            names[key] = label or str(key)
            step_type = step_dict.get("type", "tool")
            module, problem = self._step_module(step_dict, names[key])
            if problem:
                problems.append(problem)
                continue
            modules[key] = module
            steps_out.append(
                {"step_index": key, "label": label, "type": step_type, "tool_id": step_dict.get("tool_id"),
                 "tool_version": module.get_version() if step_type == "tool" else None}
            )
            if step_type in INPUT_KINDS:
                inputs_out.append({"label": label, "step_index": key, "kind": INPUT_KINDS[step_type]})
        for key in sorted(modules):
            problems.extend(self._connection_problems(key, step_dicts[key], modules, names))
            step_dict = step_dicts[key]
            if step_dict.get("type", "tool") == "tool":
                state, connected = _step_state(step_dict, format2_steps.get(key))
                connected |= set(_connection_names(step_dict))
                problems.extend(
                    self.tool_state_problems(
                        step_dict["tool_id"],
                        step_dict.get("tool_version"),
                        state,
                        f"steps.{names[key]}.state",
                        partial=True,
                        connected=sorted(connected),
                    )
                )
        return problems, steps_out, inputs_out

    def _step_module(self, step_dict: dict, name: str) -> tuple[Any, InputProblem | None]:
        """(Galaxy's module for the step, None), or (None, why Galaxy cannot read it: an unknown tool, a bad step)."""
        if step_dict.get("type", "tool") == "tool":
            tool_id = step_dict.get("tool_id")
            version = step_dict.get("tool_version")
            tool = self.app.toolbox.get_tool(tool_id, version, user=self.trans.user) if tool_id else None
            if tool is None:
                close = closest_names(str(tool_id), list(self.app.toolbox.tools_by_id))
                return None, InputProblem(
                    f"steps.{name}.tool_id",
                    UNKNOWN_STEP,
                    f"Tool {tool_id!r} is not installed on this Galaxy."
                    + (f" Did you mean {listed(close)}?" if close else ""),
                    "Find tools with search_tools(query).",
                    tuple(close) or None,
                )
            if version and tool.version != str(version):  # Galaxy would save the step with another version
                served = [each.version for each in self.lookup.tool_versions(tool_id)]
                return None, InputProblem(
                    f"steps.{name}.tool_version",
                    UNKNOWN_STEP,
                    f"Tool {tool_id!r} is not served in version {version!r}; versions served: {', '.join(served)}.",
                    "Pin a served version (get_tool_versions(tool_id)) or leave tool_version out for the default.",
                    tuple(served) or None,
                )
        try:
            return module_factory.from_dict(self.trans, step_dict, detached=True, exact_tools=False), None
        except Exception as e:  # Galaxy's modules raise many kinds on a bad step
            return None, InputProblem(
                f"steps.{name}",
                INVALID_VALUE,
                f"Galaxy cannot read this step: {str(e)[:200]}",
                "Compare with get_workflow_input_schema of a working workflow.",
            )

    def _connection_problems(self, key: int, step_dict: dict, modules: dict, names: dict) -> list[InputProblem]:
        problems = []
        module = modules[key]
        accepted_inputs = [entry["name"] for entry in module.get_all_inputs(connectable_only=True)]
        for input_name, connections in (step_dict.get("input_connections") or {}).items():
            path = f"steps.{names[key]}.in.{input_name}"
            if (
                accepted_inputs is not None
                and step_dict.get("type", "tool") == "tool"
                and input_name not in accepted_inputs
                and not input_name.startswith("__")
            ):
                close = closest_names(
                    input_name.replace("|", "."), [name.replace("|", ".") for name in accepted_inputs]
                )
                problems.append(
                    InputProblem(
                        path,
                        BAD_CONNECTION,
                        f"Step {names[key]!r} has no data input {input_name!r}."
                        + (f" Did you mean {listed(close)}?" if close else ""),
                        f"Connect one of: {listed(accepted_inputs)}.",
                        tuple(accepted_inputs),
                    )
                )
            for connection in _listify(connections):
                if not isinstance(connection, dict):
                    continue
                source = connection.get("id")
                source = int(source) if str(source).isdigit() else source
                output_name = connection.get("output_name")
                if source not in modules:
                    problems.append(
                        InputProblem(
                            path,
                            BAD_CONNECTION,
                            f"It connects to step {source!r}, which the workflow does not have.",
                            "Connect an earlier step by its label.",
                        )
                    )
                    continue
                outputs = [entry["name"] for entry in modules[source].get_all_outputs()]
                if output_name not in outputs:
                    close = closest_names(str(output_name), outputs)
                    problems.append(
                        InputProblem(
                            path,
                            BAD_CONNECTION,
                            f"Step {names[source]!r} has no output {output_name!r}."
                            + (f" Did you mean {listed(close)}?" if close else ""),
                            f"Connect {names[source]}/<output> with one of its outputs: {listed(outputs)}.",
                            tuple(outputs),
                        )
                    )
        return problems


def _parse_definition(definition: Any) -> dict[str, Any]:
    if isinstance(definition, str):
        try:
            parsed = yaml.safe_load(definition)
        except yaml.YAMLError as e:
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                f"definition is not valid YAML or JSON: {str(e)[:300]}",
                "Send the Format 2 document as YAML text or as a JSON object.",
            ) from None
        definition = parsed
    if not isinstance(definition, dict):
        raise AnalysisError(
            ErrorCode.VALIDATION_ERROR,
            "definition must be a workflow document (an object).",
            "Send a Format 2 document or a native .ga object.",
        )
    if (
        definition.get("class") != "GalaxyWorkflow"
        and definition.get("a_galaxy_workflow") != "true"
        and "steps" not in definition
    ):
        raise AnalysisError(
            ErrorCode.VALIDATION_ERROR,
            "definition is neither Format 2 (class: GalaxyWorkflow) "
            "nor a native .ga workflow (a_galaxy_workflow: 'true').",
            "Start from create_workflow_from_history's `definition`.",
        )
    return json.loads(json.dumps(definition))


def _format2_steps(as_dict: dict[str, Any]) -> dict[int, dict]:
    """Format 2 tool steps by the native step index gxformat2 gives them (inputs first, then steps)."""
    if as_dict.get("class") != "GalaxyWorkflow":
        return {}
    inputs = as_dict.get("inputs") or {}
    steps = as_dict.get("steps") or {}
    step_list = list(steps.values()) if isinstance(steps, dict) else list(steps)
    return {len(inputs) + i: step for i, step in enumerate(step_list) if isinstance(step, dict)}


def _step_state(step_dict: dict, format2_step: dict | None) -> tuple[dict, set[str]]:
    """The state a step's author wrote (Format 2 ``state``/``tool_state``, or the native JSON),
    without Galaxy's bookkeeping keys; and the parameters it marks as connected or set at run time."""
    state: Any = None
    if format2_step is not None:
        state = format2_step.get("state", format2_step.get("tool_state"))
    if state is None:
        state = step_dict.get("tool_state")
        if isinstance(state, str):
            try:
                state = json.loads(state)
            except ValueError:
                state = {}
            state = {key: _decoded(value) for key, value in (state or {}).items()}
    if not isinstance(state, dict):
        return {}, set()
    connected: set[str] = set()
    return _without_runtime_values(state, "", connected), connected


def _decoded(value: Any) -> Any:
    """Native .ga tool states keep each top-level value JSON-encoded once more."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _without_runtime_values(state: dict, prefix: str, connected: set[str]) -> dict:
    result = {}
    for key, value in state.items():
        if key in GALAXY_RUNTIME_KEYS or key.startswith("__"):
            continue
        name = flat_name(prefix, key)
        if isinstance(value, dict) and value.get("__class__") in RUNTIME_VALUE_CLASSES:
            connected.add(name)
            continue
        if isinstance(value, dict):
            result[key] = _without_runtime_values(value, name, connected)
        elif isinstance(value, list):
            result[key] = [
                _without_runtime_values(item, flat_name(prefix, repeat_block(key, i)), connected)
                if isinstance(item, dict) else item
                for i, item in enumerate(value)
            ]
        else:
            result[key] = value
    return result


def _connection_names(step_dict: dict) -> list[str]:
    return list((step_dict.get("input_connections") or {}).keys())
