"""The Galaxy tools a call would run and the jobs it would create, before it runs (for the policy).

A tool's facts say where the Galaxy tools of a call are named (``ToolFacts.runs``: the argument
and what it holds). ``PlannedRun`` reads them through the operations manager's public dry runs:
``check_tool_inputs`` for a tool id, ``rerun_request`` (``rerun_job``'s own merge of changes)
then ``check_tool_inputs`` for a job, ``get_workflow_input_schema`` and ``check_workflow_inputs``
for a workflow. A user-defined tool is named ``user_tool:<uuid>``; it makes one job unless an
input is a collection (then uncounted).
"""

from typing import Any

from galaxy_mcp_analysis.core.tool_facts import ToolFacts

#: The dry run cannot count the jobs (an unmodelled tool, no history yet, a user tool mapped over a
#: collection): refused under any job limit.
UNCOUNTED = 10**9
#: How a user-defined tool is named in allow_galaxy_tools / deny_galaxy_tools.
USER_TOOL_PREFIX = "user_tool:"


class InvalidRun(ValueError):
    """The call's own checks refuse it (nothing is created): the policy leaves the answer to them."""


def _count_tool_jobs(ops, history_id, tool_id, inputs, tool_version=None) -> int:
    checked = ops.check_tool_inputs(history_id, tool_id, inputs or {}, tool_version=tool_version)
    if not checked.get("valid"):
        raise InvalidRun("invalid inputs: the tool's own checks refuse the call")
    return UNCOUNTED if checked.get("jobs_expected") is None else int(checked["jobs_expected"])


class PlannedRun:
    """One call of a tool that runs Galaxy tools: which, and how many jobs (each read at most once)."""

    def __init__(self, ops, facts: ToolFacts, arguments: dict[str, Any]):
        assert facts.runs is not None, facts.name
        self.ops, self.arguments = ops, arguments
        self.kind, self.named = facts.runs.kind, arguments.get(facts.runs.argument)
        if not isinstance(self.named, str) or not self.named:
            raise InvalidRun(f"no {facts.runs.argument}: the call's own checks refuse it")
        self._rerun: dict[str, Any] | None = None

    def galaxy_tools(self) -> list[tuple[str, str | None]] | None:
        """The (Galaxy tool id, version) pairs the call would run (version None: Galaxy's default); None when
        they cannot be listed (a subworkflow step)."""
        if self.kind == "tool":
            return [(self.named, self.arguments.get("tool_version"))]
        if self.kind == "user_tool":
            return [(f"{USER_TOOL_PREFIX}{self.named}", None)]
        if self.kind == "job":
            request = self.rerun()
            return [(request["tool_id"], request["tool_version"])]
        steps = self.ops.get_workflow_input_schema(self.named)["steps"]
        if any(step.get("type") == "subworkflow" for step in steps):
            return None
        return [(step["tool_id"], step.get("tool_version")) for step in steps if step.get("tool_id")]

    def jobs(self) -> int:
        arguments = self.arguments
        if self.kind == "tool":
            return _count_tool_jobs(self.ops, arguments.get("history_id"), self.named, arguments.get("inputs"),
                                    arguments.get("tool_version"))
        if self.kind == "job":
            request = self.rerun()
            return _count_tool_jobs(self.ops, request["history_id"], request["tool_id"], request["inputs"],
                                    request["tool_version"])
        if self.kind == "user_tool":
            inputs = arguments.get("inputs") or {}
            mapped = any(isinstance(value, dict) and value.get("src") == "hdca" for value in inputs.values())
            return UNCOUNTED if mapped else 1
        return self._workflow_jobs()

    def rerun(self) -> dict[str, Any]:
        if self._rerun is None:
            self._rerun = self.ops.rerun_request(self.named, self.arguments.get("changes"),
                                                 self.arguments.get("history_id"))
        return self._rerun

    def _workflow_jobs(self) -> int:
        arguments = self.arguments
        if not arguments.get("history_id"):
            return UNCOUNTED  # counted against a history's data only
        checked = self.ops.check_workflow_inputs(self.named, arguments["history_id"], arguments.get("inputs") or {},
                                                 arguments.get("parameters"))
        if not checked.get("valid"):
            raise InvalidRun("invalid inputs: invoke_workflow's own checks refuse the call")
        return sum(int(step.get("jobs_expected") or 0) for step in checked["steps"])
