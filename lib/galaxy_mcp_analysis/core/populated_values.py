"""Galaxy as the judge of a value its typed model refuses: would Galaxy run exactly the value sent?

Galaxy's typed request model (``galaxy.tool_util.parameters``) is stricter than what Galaxy's own
request handling runs (its population of the legacy request, ``Tool.expand_incoming``). Where the
model refuses a value, the preflight asks that population (in process, creating nothing) and reads
what Galaxy made of the value: the refusal stands where Galaxy refuses the value too (an error for
that parameter), where Galaxy drops it (no such parameter in the populated state), or where Galaxy
would run another value (a default in its place, a coercion to another meaning: ``2.5`` read as the
integer 2, ``"banana"`` or a boolean's ``truevalue`` read as false). Only a value Galaxy keeps with
the meaning sent is let through, and named in the result's ``decided_by_galaxy``.

Pure: the populated state comes in as plain values (Galaxy's objects are never compared here).
"""

import copy
import re
from collections.abc import Mapping
from typing import Any

from galaxy_mcp_analysis.core.scalars import (
    boolean_word,
    NULL_WORDS,
)
from galaxy_mcp_analysis.core.input_problems import (
    InputProblem,
    INVALID_VALUE,
    NOT_AN_OPTION,
    OUT_OF_RANGE,
    WRONG_TYPE,
)

#: The model's rules Galaxy's request handling may overrule. Never: unknown names and parameters of another
#: branch (Galaxy drops them: a silent change), datatypes and collection types (today's rule, the tool
#: form's), a missing required value (nothing was sent to compare).
OVERRULABLE = frozenset((WRONG_TYPE, NOT_AN_OPTION, OUT_OF_RANGE, INVALID_VALUE))

_STEP = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]")
_NULL = (None, *NULL_WORDS)


def path_steps(path: str, root: str = "inputs") -> list[str | int] | None:
    """``inputs.cond.param`` / ``inputs.rep[0].x`` as ``["cond", "param"]`` / ``["rep", 0, "x"]``; None when the
    path is not one of a value below ``root`` (``inputs`` itself, a flat ``a|b`` step)."""
    if not path.startswith(root):
        return None
    rest = path[len(root):]
    steps: list[str | int] = []
    position = 0
    for match in _STEP.finditer(rest):
        if match.start() != position or (match.group(1) and "|" in match.group(1)):
            return None
        steps.append(match.group(1) if match.group(1) is not None else int(match.group(2)))
        position = match.end()
    return steps if steps and position == len(rest) else None


def flat_key(steps: list[str | int]) -> str:
    """The key Galaxy's legacy population files an error under: ``cond|param``, ``rep_0|x``."""
    key = ""
    for step in steps:
        key = f"{key}_{step}" if isinstance(step, int) else (f"{key}|{step}" if key else step)
    return key


def value_at(state: Any, steps: list[str | int]) -> tuple[bool, Any]:
    """``(found, value)`` at ``steps`` of a nested state (Galaxy's populated one or the request's)."""
    for step in steps:
        if isinstance(step, int):
            if not isinstance(state, list) or step >= len(state):
                return False, None
        elif not isinstance(state, Mapping) or step not in state:
            return False, None
        state = state[step]
    return True, state


def same_meaning(sent: Any, populated: Any) -> bool:
    """Whether Galaxy's populated value is the value sent, written any way Galaxy itself reads it the same."""
    if isinstance(populated, bool):
        return boolean_word(sent) is populated
    if populated is None:
        return sent in _NULL or (isinstance(sent, str) and sent.strip().lower() in _NULL) or sent == []
    if isinstance(populated, (int, float)):
        try:
            return not isinstance(sent, bool) and float(str(sent).strip()) == float(populated)
        except ValueError:
            return False
    if isinstance(populated, str):
        return isinstance(sent, (str, int, float)) and not isinstance(sent, bool) and str(sent) == populated
    if isinstance(populated, list):
        given = sent.split(",") if isinstance(sent, str) else sent if isinstance(sent, list) else [sent]
        return (
            all(isinstance(part, (str, int, float)) and not isinstance(part, bool) for part in given)
            and sorted(str(part).strip() for part in given) == sorted(str(part) for part in populated)
        )
    return False


def verdict(
    problem: InputProblem, sent_state: Any, populations: list[tuple[Any, Mapping[str, Any]]], scalar_at
) -> dict[str, Any] | None:
    """The entry of ``decided_by_galaxy`` when Galaxy runs ``problem``'s value exactly as sent, else None.

    ``populations``: one ``(populated state as plain values, errors by flat key)`` per job Galaxy would make;
    ``scalar_at(steps)``: whether Galaxy has a parameter that takes a plain value (not a dataset) there.
    """
    if problem.rule not in OVERRULABLE or not populations:
        return None
    steps = path_steps(problem.path)
    if steps is None or not scalar_at(steps):
        return None
    found, sent = value_at(sent_state, steps)
    if not found:
        return None
    key = flat_key(steps)
    for populated, errors in populations:
        kept, value = value_at(populated, steps)
        if key in errors or not kept or not same_meaning(sent, value):
            return None
    return {"path": problem.path, "model_rule": problem.rule, "sent": sent, "galaxy_reads": value}


def as_read(state: Any, decided: list[dict[str, Any]]) -> Any:
    """A copy of the request's nested state with each value Galaxy decided as Galaxy reads it (``"off"``: false)."""
    return replaced_at(state, {entry["path"]: entry["galaxy_reads"] for entry in decided})


def replaced_at(state: Any, values: dict[str, Any]) -> Any:
    """A copy of a nested state with the value at each path (``inputs.rep[0].x``) replaced."""
    changed = copy.deepcopy(state)
    for path, value in values.items():
        *parents, last = path_steps(path)
        target = changed
        for step in parents:
            target = target[step]
        target[last] = value
    return changed
