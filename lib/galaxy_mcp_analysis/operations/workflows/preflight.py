"""Checking and invoking: ``check_workflow_inputs`` and ``invoke_workflow`` (the stock method overridden)
share one preflight: inputs resolved by label or step index and checked (``input_checks``), step
parameters checked by the tool-input capability, and the jobs each step will run.
"""

import json
from typing import Any

from galaxy import exceptions
from galaxy.model import Workflow

from galaxy_mcp_analysis.core.errors import (
    AnalysisError,
    ErrorCode,
)
from galaxy_mcp_analysis.core.input_problems import (
    InputProblem,
    problems_error,
    WRONG_TYPE,
)
from galaxy_mcp_analysis.core.workflows import (
    INPUT_KINDS,
    not_a_tool_step_problem,
    resolve_inputs,
    resolve_step,
    WorkflowInput,
)
from galaxy_mcp_analysis.operations.workflow_steps import (
    maps_of_given_collections,
    saved_step_values,
    version_change,
)
from galaxy_mcp_analysis.operations.workflows.common import (
    _ordered_steps,
    _step_ref,
)
from galaxy_mcp_analysis.operations.workflows.loaded_workflow import service_with_loaded_workflow


class WorkflowPreflight:
    """Every input and step parameter of an invocation checked before Galaxy runs it, a mixin of ``Workflows``."""

    def check_workflow_inputs(
        self,
        workflow_id: str,
        history_id: str,
        inputs: dict[str, Any],
        parameters: dict[str, Any] | None = None,
        version: int | None = None,
    ) -> dict[str, Any]:
        _, workflow = self.accessible_workflow(workflow_id, version)
        # "write": Galaxy's invocation takes the history through get_mutable, so a purged or archived one of the
        # caller's is refused here, in our words, not by Galaxy's invocation.
        self.lookup.history(history_id, "write")
        plan = self._preflight(workflow, inputs or {}, parameters or {}, history_id)
        by_index = {step.order_index: step for step in workflow.steps}
        for entry in plan["steps"]:
            if entry.get("tool_id"):
                entry["saved"] = saved_step_values(self.trans, by_index[entry["step_index"]])[1]
        return {
            "valid": not plan["problems"],
            "errors": [problem.as_dict() for problem in plan["problems"]],
            "resolved_inputs": plan["resolved_inputs"],
            "defaulted_inputs": plan["defaulted_inputs"],
            "inputs_by": plan["inputs_by"],
            "mapped_over": plan["mapped_over"],
            "steps": plan["steps"],
            "version_changes": plan["version_changes"],
        }

    def invoke_workflow(
        self,
        workflow_id: str,
        history_id: str | None = None,
        inputs: dict[str, Any] | None = None,
        parameters: dict[str, Any] | None = None,
        history_name: str | None = None,
    ) -> dict[str, Any]:
        """Galaxy's invocation, after every input and step parameter is checked (stock method overridden)."""
        stored, workflow = self.accessible_workflow(workflow_id, None)
        if history_id:
            self.lookup.history(history_id, "write")
        plan = self._preflight(workflow, inputs or {}, parameters or {}, history_id)
        if plan["problems"]:
            raise problems_error(
                plan["problems"],
                f"invoke_workflow({stored.name!r})",
                nothing_done="Nothing was invoked.",
                suggestion="Fix every path listed and call again; check_workflow_inputs checks without invoking, "
                "get_workflow_input_schema shows labels, accepted types and step parameters.",
            )
        # Galaxy's service looks the workflow up again by id; for this call it is handed the one checked above.
        self._workflows_service = service_with_loaded_workflow(self.workflows_service, self.trans, stored)
        try:
            result = super().invoke_workflow(
                workflow_id, history_id, plan["galaxy_inputs"], plan["galaxy_parameters"], history_name
            )
        except exceptions.MessageException as e:
            raise _upgrade_messages_error(e, workflow) or e
        if hasattr(result, "model_dump"):  # Galaxy's WorkflowInvocationResponse, as its tool would serialise it
            result = result.model_dump(mode="json")
        result["inputs_by"] = plan["inputs_by"]
        result["mapped_over"] = plan["mapped_over"]
        result["resolved_inputs"] = plan["resolved_inputs"]
        result["defaulted_inputs"] = plan["defaulted_inputs"]
        result["version_changes"] = plan["version_changes"]
        return result

    def _preflight(
        self, workflow: Workflow, inputs: dict[str, Any], parameters: dict[str, Any], history_id: str | None
    ) -> dict[str, Any]:
        steps = _ordered_steps(workflow)
        input_steps = {step.order_index: step for step in steps if step.type in INPUT_KINDS}
        entries = [_workflow_input(step) for step in input_steps.values()]
        problems: list[InputProblem] = []
        if not isinstance(inputs, dict):
            problems.append(
                InputProblem(
                    "inputs",
                    WRONG_TYPE,
                    "inputs must be an object keyed by input label.",
                    "See get_workflow_input_schema's template.",
                )
            )
            inputs = {}
        resolved = resolve_inputs(inputs, entries)
        problems.extend(resolved.problems)
        mapped_over: list[dict[str, Any]] = []
        map_sizes: dict[int, int] = {}
        given: dict[int, Any] = {}  # the collection given to each collection input that takes it whole
        resolved_inputs: dict[str, Any] = {}
        galaxy_inputs: dict[str, Any] = {}
        for index, value in resolved.values.items():
            step = input_steps[index]
            path = f"inputs.{resolved.keys[index]}"
            name = step.effective_label or str(index)
            if value is None:
                continue
            if step.type == "parameter_input":
                problems.extend(self.parameter_input_problems(step, value, path))
            else:
                problems.extend(self.data_input_problems(step, value, path, name, mapped_over, map_sizes, given))
            resolved_inputs[name] = value
            galaxy_inputs[str(index)] = value
        defaulted = _fill_left_out(input_steps, resolved.values, resolved_inputs)
        galaxy_parameters, step_problems = self._step_parameter_problems(steps, parameters)
        problems.extend(step_problems)
        return {
            "problems": problems,
            "inputs_by": resolved.inputs_by,
            "mapped_over": mapped_over,
            "resolved_inputs": resolved_inputs,
            "defaulted_inputs": defaulted,
            "galaxy_inputs": galaxy_inputs,
            "galaxy_parameters": galaxy_parameters,
            "steps": _expected_jobs(steps, map_sizes | maps_of_given_collections(self.trans, steps, given)),
            "version_changes": self._version_changes(steps),
        }

    def _version_changes(self, steps) -> list[dict[str, Any]]:
        """Tool steps pinned to a version this server lacks, with the version Galaxy runs instead."""
        def served(tool_id: str) -> list[str]:
            return [tool.version for tool in self.lookup.tool_versions(tool_id)]

        return [change for step in steps if (change := version_change(self.trans, step, served)) is not None]

    def _step_parameter_problems(self, steps, parameters: Any) -> tuple[dict[str, Any], list[InputProblem]]:
        """``parameters`` keyed by step label or index -> Galaxy's step-index keys, and the problems."""
        if not isinstance(parameters, dict):
            return {}, [
                InputProblem(
                    "parameters",
                    WRONG_TYPE,
                    "parameters must be an object keyed by step label.",
                    "See get_workflow_input_schema's `parameters`.",
                )
            ]
        refs = [_step_ref(step) for step in steps]
        by_index = {step.order_index: step for step in steps}
        galaxy_parameters: dict[str, Any] = {}
        problems: list[InputProblem] = []
        for key, values in parameters.items():
            found = resolve_step(key, refs)
            if isinstance(found, InputProblem):
                problems.append(found)
                continue
            if found.type != "tool":
                problems.append(not_a_tool_step_problem(key, found))
                continue
            if not isinstance(values, dict):
                problems.append(
                    InputProblem(
                        f"parameters.{key}",
                        WRONG_TYPE,
                        f"parameters[{key!r}] must be an object of tool parameters.",
                        'e.g. {"column": 2}',
                    )
                )
                continue
            step = by_index[found.step_index]
            connected = sorted({connection.input_name for connection in step.input_connections})
            problems.extend(
                self.tool_state_problems(
                    step.tool_id, step.tool_version, values, f"parameters.{key}", partial=True, connected=connected
                )
            )
            galaxy_parameters[str(found.step_index)] = values
        return galaxy_parameters, problems


_NO_DEFAULT = object()


def _upgrade_messages_error(error: Exception, workflow: Workflow) -> AnalysisError | None:
    """Galaxy's "Workflow step has upgrade messages" (a stored step lacks parameters its tool has),
    naming the steps by label and what Galaxy says is missing; None for any other error."""
    details = (getattr(error, "extra_error_info", None) or {}).get("err_data")
    if "upgrade messages" not in str(error) or not isinstance(details, dict):
        return None
    names = {step.order_index: step.effective_label or str(step.order_index) for step in workflow.steps}
    listed_steps = "; ".join(
        f"step {names.get(index, index)!r}: {json.dumps(messages, default=str)[:300]}"
        for index, messages in details.items()
    )
    return AnalysisError(
        ErrorCode.VALIDATION_ERROR,
        f"Galaxy refuses to invoke this workflow: its stored steps lack tool parameters ({listed_steps}). "
        "Nothing was invoked.",
        "Save the workflow again with create_workflow (it stores every tool default), "
        "or fix the steps in Galaxy's workflow editor.",
    )


def _expected_jobs(steps, map_sizes: dict[int, int]) -> list[dict[str, Any]]:
    """Jobs each tool step will run: 1, or the size of the collection mapped over upstream of it."""
    by_id = {step.id: step for step in steps}
    size: dict[int, int] = {}
    result = []
    for step in steps:  # ordered: sources come before the steps they feed
        upstream = [
            size.get(by_id[c.output_step_id].order_index, 0)
            for c in step.input_connections
            if c.output_step_id in by_id
        ]
        size[step.order_index] = max([map_sizes.get(step.order_index, 0), *upstream])
        if step.type == "tool":
            result.append(
                {
                    "step_index": step.order_index,
                    "label": step.label,
                    "tool_id": step.tool_id,
                    "tool_version": step.tool_version,
                    "jobs_expected": size[step.order_index] or 1,
                }
            )
        elif step.type == "subworkflow" and step.subworkflow is not None:
            # Its tool steps (nested ones too), each once per element mapped over; maps inside it are not counted.
            result.append(
                {
                    "step_index": step.order_index,
                    "label": step.label,
                    "tool_id": None,
                    "subworkflow": True,
                    "jobs_expected": (size[step.order_index] or 1) * _tool_steps(step.subworkflow),
                }
            )
    return result


def _tool_steps(workflow: Workflow) -> int:
    return sum(
        _tool_steps(step.subworkflow) if step.type == "subworkflow" and step.subworkflow else step.type == "tool"
        for step in workflow.steps
    )


def _workflow_input(step) -> WorkflowInput:
    return WorkflowInput(
        step.order_index,
        step.effective_label,
        INPUT_KINDS[step.type],
        bool(step.input_optional),
        step.get_input_default_value(_NO_DEFAULT) is not _NO_DEFAULT,
    )


def _fill_left_out(input_steps: dict, given: dict[int, Any], resolved_inputs: dict[str, Any]) -> list[str]:
    """What Galaxy runs with for each input left out (its default, or nothing for an optional input), put
    into ``resolved_inputs``; returns those inputs' names."""
    defaulted: list[str] = []
    for index, step in input_steps.items():
        if given.get(index) is None:
            default = step.get_input_default_value(_NO_DEFAULT)
            if default is not _NO_DEFAULT or step.input_optional:
                name = step.effective_label or str(index)
                resolved_inputs[name] = None if default is _NO_DEFAULT else default
                defaulted.append(name)
    return defaulted
