"""Galaxy's own request handling asked, in process and creating nothing, about values its typed model refuses.

``Tool.expand_incoming`` is the part of ``Tool.handle_input`` before any job exists: it expands a
batch request into one parameter set per job and populates each against the caller's data
(``populate_state``: every value read by its parameter's ``from_json`` and validated), collecting an
error per parameter. The preflight calls that part only (never ``execute``), once per request, and
``core.populated_values`` decides, path by path, whether Galaxy would run exactly the value sent.
"""

import copy
from collections.abc import (
    Callable,
    Mapping,
)
from typing import Any

from galaxy import exceptions
from galaxy.work.context import proxy_work_context_for_history

from galaxy_mcp_analysis.core.input_problems import InputProblem
from galaxy_mcp_analysis.core.populated_values import (
    OVERRULABLE,
    verdict,
)

#: Galaxy's parameter types whose values are items (judged by today's datatype rule, never overruled).
_ITEMS = ("data", "data_collection")


class GalaxyJudge:
    """Galaxy's population of one request, made on first need and read for each refused path."""

    def __init__(self, trans, tool, history, flat: Mapping[str, Any] | Callable[[], Mapping[str, Any]]):
        """``flat``: the request in the flat form Galaxy's legacy API reads, or how to make it when first needed
        (a valid request never needs it)."""
        self.trans, self.tool, self.history, self._flat = trans, tool, history, flat
        self._populations: list[tuple[Any, dict[str, str]]] | None = None
        #: Galaxy's own refusal of the whole request (e.g. batch inputs that do not match), if any.
        self.refusal: str | None = None

    def populations(self) -> list[tuple[Any, dict[str, str]]]:
        """One ``(populated state, {flat key: error text})`` per job Galaxy would make; [] when it refuses."""
        if self._populations is None:
            context = proxy_work_context_for_history(self.trans, history=self.history)
            try:
                flat = self._flat() if callable(self._flat) else self._flat
                states, all_errors, _, _ = self.tool.expand_incoming(context, copy.deepcopy(dict(flat)), "legacy")
            except exceptions.MessageException as error:
                self.refusal = error.err_msg
                states, all_errors = [], []
            self._populations = [
                (state, {key: str(value) for key, value in errors.items()})
                for state, errors in zip(states, all_errors)
            ]
        return self._populations

    def overrule(self, problems: list[InputProblem], sent_state: Any) -> tuple[list[InputProblem], list[dict]]:
        """``(problems left, decided_by_galaxy entries)``: each problem whose value Galaxy runs as sent is left out."""
        if not any(problem.rule in OVERRULABLE for problem in problems):
            return problems, []
        populations = self.populations()
        left, decided = [], []
        for problem in problems:
            entry = verdict(problem, sent_state, populations, self._takes_plain_value)
            if entry is None:
                left.append(problem)
            else:
                decided.append(entry)
        return left, decided

    def _takes_plain_value(self, steps: list[str | int]) -> bool:
        """Whether Galaxy's tool has, at ``steps`` of its first populated state, a parameter taking a plain value."""
        populations = self.populations()
        if not populations:
            return False
        level: Mapping[str, Any] = self.tool.inputs
        state: Any = populations[0][0]
        parameter = None
        for step in steps:
            if isinstance(step, int):
                if not isinstance(state, list) or step >= len(state):
                    return False
                state = state[step]
                continue
            parameter = level.get(step) if isinstance(level, Mapping) else None
            if parameter is None or not isinstance(state, Mapping):
                return False
            state = state.get(step)
            level = _inner_inputs(parameter, state)
        return parameter is not None and level is None and getattr(parameter, "type", None) not in _ITEMS


def _inner_inputs(parameter, state: Any) -> Mapping[str, Any] | None:
    """The parameters one level below a group for its populated state; None below a plain parameter."""
    kind = getattr(parameter, "type", None)
    if kind in ("repeat", "section"):
        return parameter.inputs
    if kind == "conditional":
        case = state.get("__current_case__") if isinstance(state, Mapping) else None
        inner = parameter.cases[case].inputs if isinstance(case, int) and case < len(parameter.cases) else {}
        return {parameter.test_param.name: parameter.test_param, **inner}
    return None
