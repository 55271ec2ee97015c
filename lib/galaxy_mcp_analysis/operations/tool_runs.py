"""Running a tool on an agent's request, and its dry run: ``run_tool`` and ``check_tool_inputs``.

Both send the request through the same preflight (``operations.tool_inputs``: Galaxy's typed model,
the datasets' types, map-over), then through Galaxy's own population of the request against the
data (``tool.expand_incoming``, which creates nothing): ``check_tool_inputs`` reports what either
refuses, ``run_tool`` refuses it before any job exists, or hands Galaxy's run_tool the request in
the flat form Galaxy's legacy tool API takes.
"""

from typing import Any

from galaxy import exceptions

from galaxy_mcp_analysis.core.collection_summary import collection_fields
from galaxy_mcp_analysis.core.input_problems import (
    InputProblem,
    INVALID_VALUE,
    problems_error,
)
from galaxy_mcp_analysis.core.tool_input_problems import population_problems
from galaxy_mcp_analysis.operations.request_handling import GalaxyJudge


class ToolRuns:
    """run_tool and check_tool_inputs, one preflight and one population step for both."""

    def run_tool(
        self, history_id: str, tool_id: str, inputs: dict[str, Any], tool_version: str | None = None
    ) -> dict[str, Any]:
        """Galaxy's run_tool, its inputs checked first (operations.tool_inputs), bare collections mapped over."""
        # Galaxy's own refusal of an unknown tool is a bare "Tool not found." coded as invalid input;
        # lookup.tool answers [NOT_FOUND] with how to find the id (and refuses tools the user may not run).
        tool = self.lookup.tool(tool_id, tool_version)
        self.check_input_references(inputs)
        history = self.lookup.history(history_id, "write")
        checked = self.preflight(tool, inputs, raise_problems=True, history=history)
        try:
            # Galaxy runs the very tool checked: its id (the guid of a ToolShed tool) and version.
            payload = {"history_id": history_id, "tool_id": tool.id, "tool_version": tool.version,
                       "inputs": checked.flat}
            result = self._encode_ids_in_response(self.tools_service._create(self.trans, payload))
        except exceptions.RequestParameterInvalidException as refused:
            # Galaxy judged a value against the data (a column the dataset lacks, an option from its
            # metadata) before making any job: the same refusal as check_tool_inputs', by path and rule.
            judged = refused.extra_error_info.get("err_data")
            problems = self._population_problems(tool, history, checked.flat) if judged else []
            if not problems:
                raise
            raise problems_error(problems, f"Tool {tool.id!r} ({tool.version}) cannot run with these inputs") from None
        # What an agent needs next comes first: a map-over's collections, then what the check did; Galaxy's
        # per-output and per-job details (about 30 fields each) after them.
        summary: dict[str, Any] = {
            "implicit_collections": [
                {"id": hdca["id"], **collection_fields(hdca), "output_name": hdca.get("output_name")}
                for hdca in result.get("implicit_collections", [])
            ],
            "mapped_over": checked.mapped_over,
            "inputs_checked": checked.modelled,
            "unchecked": checked.unchecked,
            "decided_by_galaxy": checked.decided_by_galaxy,
            "ignored": checked.ignored,
            "tool_id": tool.id,
            "tool_version": tool.version,
        }
        if checked.normalised:
            summary["normalised"] = checked.normalised
        if not checked.modelled:
            summary["inputs_not_checked_because"] = checked.reason
        return summary | {key: value for key, value in result.items() if key not in summary}

    def check_tool_inputs(
        self, history_id: str, tool_id: str, inputs: dict, tool_version: str | None = None
    ) -> dict[str, Any]:
        tool = self.lookup.tool(tool_id, tool_version)
        history = self.lookup.history(history_id, "write")
        self.check_input_references(inputs)
        checked = self.preflight(tool, inputs, raise_problems=False, history=history)
        if not checked.problems:
            # run_tool's answer too: Galaxy refuses these when it populates the request against the data.
            checked.problems += self._population_problems(tool, history, checked.flat, checked.judge)
        answer: dict[str, Any] = {
            "tool_id": tool.id,
            "tool_version": tool.version,
            "valid": not checked.problems,
            "errors": [problem.as_dict() for problem in checked.problems],
            "modelled": checked.modelled,
            "inputs_checked": checked.modelled,
            "unchecked": checked.unchecked,
            "decided_by_galaxy": checked.decided_by_galaxy,
            "ignored": checked.ignored,
        }
        if not checked.modelled:
            return answer | {
                "resolved_inputs": None,
                "jobs_expected": None,
                "map_over": checked.mapped_over,
                "reason": checked.reason,
            }
        return answer | {
            "resolved_inputs": checked.resolved if not checked.problems else None,
            "jobs_expected": checked.jobs_expected if not checked.problems else 0,
            "map_over": checked.map_over,
            "mapped_over": checked.mapped_over,
            **({"normalised": checked.normalised} if checked.normalised else {}),
        }

    def _population_problems(self, tool, history, flat: dict[str, Any], judge=None) -> list[InputProblem]:
        """What Galaxy's own population of the request (the step of its run_tool before any job is made)
        refuses, for the dry run to agree with the run: rules that depend on the data, not the tool."""
        judge = judge or GalaxyJudge(self.trans, tool, history, flat)
        populations = judge.populations()
        if judge.refusal is not None:
            fix = "Fix the inputs Galaxy names and check again."
            return [InputProblem("inputs", INVALID_VALUE, judge.refusal, fix)]
        problems: dict[tuple[str, str], InputProblem] = {}  # a mapped-over request repeats one refusal per job
        for _, errors in populations:
            for problem in population_problems(errors):
                problems.setdefault((problem.path, problem.message), problem)
        return [self.column_rule(tool, problem, flat) for problem in problems.values()]
