"""The one shape of "what is wrong with this request", shared by tool inputs and workflow inputs.

A check (run_tool's preflight, check_tool_inputs, invoke_workflow's preflight,
check_workflow_inputs, create_workflow) collects every problem it finds, each with the
path of the offending value, instead of stopping at the first. A dry run returns them as
data (``{valid, errors: [InputProblem.as_dict()]}``); a real call raises one
``[VALIDATION_ERROR]`` listing them all (``problems_error``), and nothing is created.
"""

import difflib
from collections.abc import (
    Iterable,
    Sequence,
)
from dataclasses import dataclass
from typing import Any

from galaxy_mcp_analysis.core.errors import (
    AnalysisError,
    ErrorCode,
)

#: The rules a problem can break (stable: agents may branch on them).
UNKNOWN_PARAMETER = "unknown_parameter"
NOT_AN_OPTION = "not_an_option"
UNSELECTED_BRANCH = "unselected_branch"
MISSING_REQUIRED = "missing_required"
WRONG_TYPE = "wrong_type"
OUT_OF_RANGE = "out_of_range"
DATATYPE_NOT_ACCEPTED = "datatype_not_accepted"
COLLECTION_TYPE_NOT_ACCEPTED = "collection_type_not_accepted"
INVALID_VALUE = "invalid_value"
UNKNOWN_STEP = "unknown_step"
UNKNOWN_INPUT = "unknown_input"
BAD_CONNECTION = "bad_connection"

#: A request this wrong is reported in part; the first problems are the useful ones.
MAX_REPORTED_PROBLEMS = 20
#: Closest valid names offered for an unknown one.
MAX_SUGGESTED_NAMES = 3
#: Valid values listed in a message (all of them stay in ``valid_values``).
MAX_LISTED_VALUES = 12


@dataclass(frozen=True)
class InputProblem:
    #: Where the offending value sits, in the request's own terms: ``inputs.cond.param``,
    #: ``inputs.queries[1].input2``, ``steps.sort.column`` (never a database id).
    path: str
    rule: str
    message: str
    suggestion: str
    valid_values: tuple[Any, ...] | None = None

    def as_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = {
            "path": self.path,
            "rule": self.rule,
            "message": self.message,
            "suggestion": self.suggestion,
        }
        if self.valid_values is not None:
            result["valid_values"] = list(self.valid_values)
        return result


def closest_names(name: str, candidates: Iterable[str], n: int = MAX_SUGGESTED_NAMES) -> list[str]:
    """The valid names an unknown ``name`` most likely meant (misspelled, or another case)."""
    candidates = list(dict.fromkeys(candidates))
    by_lower = {candidate.lower(): candidate for candidate in candidates}
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=n, cutoff=0.5)
    return [by_lower[match] for match in close]


def listed(values: Sequence[Any], limit: int = MAX_LISTED_VALUES) -> str:
    """``'a', 'b', 'c'`` for a message; long lists end with how many more there are."""
    shown = ", ".join(repr(value) for value in values[:limit])
    return shown + (f" (and {len(values) - limit} more)" if len(values) > limit else "")


def unknown_name_problem(path: str, name: str, valid: Sequence[str], where: str) -> InputProblem:
    """``name`` is not a parameter (or input, or step) ``where`` has; offers the closest valid names."""
    close = closest_names(name, valid)
    message = f"{where} has no parameter {name!r}."
    if close:
        message += f" Did you mean {listed(close)}?"
    suggestion = (
        f"Rename it to {close[0]!r}." if close else f"Use one of: {listed(list(valid))}."
    ) + " get_tool_input_schema shows every parameter and where it goes."
    return InputProblem(path, UNKNOWN_PARAMETER, message, suggestion, tuple(valid))


def problems_error(
    problems: Sequence[InputProblem],
    subject: str,
    nothing_done: str = "Nothing was queued or created.",
    suggestion: str | None = None,
) -> AnalysisError:
    """One [VALIDATION_ERROR] naming every problem with its path (at most MAX_REPORTED_PROBLEMS)."""
    shown = problems[:MAX_REPORTED_PROBLEMS]
    lines = [f"- {problem.path}: {problem.message} ({problem.rule}) Fix: {problem.suggestion}" for problem in shown]
    if len(problems) > len(shown):
        lines.append(f"- ... and {len(problems) - len(shown)} more.")
    count = f"{len(problems)} problem" + ("s" if len(problems) != 1 else "")
    return AnalysisError(
        ErrorCode.VALIDATION_ERROR,
        f"{subject}: {count}:\n" + "\n".join(lines) + f"\n{nothing_done}",
        suggestion or "Fix every path listed and call again; the dry run (check_tool_inputs) checks without running.",
    )
