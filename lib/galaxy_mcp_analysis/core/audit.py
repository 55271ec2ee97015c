"""What one audit line says about one MCP tool call: pure, no Galaxy.

``audit_record`` builds the line (a dict, one JSON object per line in the trail) from the tool's
facts (``core.tool_facts``), its arguments, how it ended and its structured result. The ids of
what a call created, changed, deleted or purged and of the jobs it started come from the facts'
``effects``: paths into the call's arguments or result, each with the kind of object it names
(``touched`` keeps the kinds; the flat lists do not); ``purges_with`` turns deleted into purged,
``history`` says where the call's history is named. A tool without effects (every read) records
empty lists; ``test_every_writing_tool_has_effects`` keeps the table complete.
"""

import datetime
import re
from collections.abc import Iterable
from typing import Any

from galaxy_mcp_analysis.core.tool_facts import ToolFacts

#: Strings longer than this are cut in the recorded arguments (and marked with their length).
MAX_STRING_CHARACTERS = 200
#: Lists longer than this keep their first items and a marker of how many were left out.
MAX_LIST_ITEMS = 20
#: Nesting deeper than this is replaced by a marker.
MAX_DEPTH = 6
#: Argument names never recorded: the caller's credentials.
SECRET_ARGUMENTS = frozenset({"api_key"})
EFFECT_KINDS = ("created", "changed", "deleted", "purged", "jobs")
_CODE = re.compile(r"^\[([A-Z_]+)\] ")

#: ``touched`` names each id's kind: Galaxy's encoded ids are per table, so a dataset, a job and a
#: history can share one. A path's kind ``src`` reads the item's own ``src`` (hda / hdca).
_KIND_OF_SRC = {"hda": "dataset", "hdca": "collection"}
#: The ``touched`` key for the ``jobs`` list: the calls that started them.
_STARTED = "started"

def _walk(value: Any, steps: list[str], parent: Any = None) -> Iterable[tuple[Any, Any]]:
    """The values at ``steps`` under ``value``, each with the dict that holds it."""
    if not steps:
        yield value, parent
        return
    step, rest = steps[0], steps[1:]
    many = step.endswith("[]")
    name = step[:-2] if many else step
    if name:
        parent, value = value, value.get(name) if isinstance(value, dict) else None
    if many:
        for item in value if isinstance(value, list) else ():
            yield from _walk(item, rest, value)
    elif value is not None:
        yield from _walk(value, rest, parent)


def _found_at(path: str, arguments: dict[str, Any], result: Any) -> list[tuple[str, Any]]:
    root, _, rest = path.partition(".")
    if root.endswith("[]"):  # "result[]": the result itself is a list
        root, rest = root[:-2], "[]." + rest if rest else "[]"
    source = arguments if root == "arguments" else result
    steps = [step for step in rest.split(".") if step]
    return [(str(found), holder) for found, holder in _walk(source, steps)
            if isinstance(found, (str, int)) and found != ""]


def ids_at(path: str, arguments: dict[str, Any], result: Any) -> list[str]:
    """The string ids at ``path`` (``arguments.x`` or ``result.a[].b``; a result list is walked by ``result[].b``)."""
    return [found for found, _ in _found_at(path, arguments, result)]


def touched(tool: ToolFacts, arguments: dict[str, Any], result: Any) -> dict[str, dict[str, list[str]]]:
    """What a successful call of ``tool`` touched, by effect then kind: ``{"created": {"dataset": [id]}}``."""
    purging = tool.purges(arguments)
    found: dict[str, dict[str, list[str]]] = {}
    for effect, paths in tool.effects.items():
        effect = "purged" if purging and effect == "deleted" else _STARTED if effect == "jobs" else effect
        for path, kind in paths:
            for found_id, holder in _found_at(path, arguments, result):
                named = kind
                if kind == "src":
                    named = _KIND_OF_SRC.get(holder.get("src") if isinstance(holder, dict) else None, "item")
                ids = found.setdefault(effect, {}).setdefault(named, [])
                if found_id not in ids:
                    ids.append(found_id)
    return found


def effects(tool: ToolFacts, arguments: dict[str, Any], result: Any) -> dict[str, list[str]]:
    """The ids each kind of effect names for a successful call of ``tool`` (empty lists for a read)."""
    lists: dict[str, list[str]] = {kind: [] for kind in EFFECT_KINDS}
    for effect, by_kind in touched(tool, arguments, result).items():
        named = lists["jobs" if effect == _STARTED else effect]
        for found_id in (found_id for ids in by_kind.values() for found_id in ids):
            if found_id not in named:
                named.append(found_id)
    return lists


def shortened(value: Any, depth: int = 0) -> Any:
    """``value`` with long strings cut, long lists truncated and deep nesting replaced, each marked."""
    if isinstance(value, str):
        if len(value) > MAX_STRING_CHARACTERS:
            return f"{value[:MAX_STRING_CHARACTERS]}...[cut: {len(value)} characters]"
        return value
    if depth >= MAX_DEPTH and isinstance(value, (dict, list, tuple)):
        return "[cut: nested too deep]"
    if isinstance(value, dict):
        return {str(key): shortened(item, depth + 1) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        kept = [shortened(item, depth + 1) for item in value[:MAX_LIST_ITEMS]]
        if len(value) > MAX_LIST_ITEMS:
            kept.append(f"[cut: {len(value) - MAX_LIST_ITEMS} more items]")
        return kept
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return shortened(str(value), depth)


def recorded_arguments(arguments: dict[str, Any] | None, secrets: Iterable[str] = ()) -> dict[str, Any]:
    """The arguments as the trail keeps them: no API key (by name, or any value equal to a key), long values cut."""
    secret_values = {secret for secret in secrets if secret}
    kept = {}
    for name, value in (arguments or {}).items():
        if name in SECRET_ARGUMENTS or (isinstance(value, str) and value in secret_values):
            continue
        kept[name] = shortened(value)
    return kept


def history_of(tool: ToolFacts, arguments: dict[str, Any], result: Any) -> str | None:
    """The history a call acted in, at the first of the tool's ``history`` paths that names one."""
    for path in tool.history:
        found = ids_at(path, arguments, result)
        if found and isinstance(found[0], str):
            return found[0]
    return None


def outcome_of(error: BaseException | None) -> str:
    """``ok``, or the code a coded error starts with (``[VALIDATION_ERROR] ...`` -> ``VALIDATION_ERROR``)."""
    if error is None:
        return "ok"
    if not isinstance(error, Exception):
        return "CANCELLED"
    match = _CODE.match(str(error))
    if match:
        return match.group(1)
    code = getattr(error, "code", None)
    return str(getattr(code, "value", code)) if code else "SYSTEM_ERROR"


def audit_record(
    *,
    tool: ToolFacts,
    arguments: dict[str, Any] | None,
    error: BaseException | None,
    result: Any,
    started: float,
    duration_seconds: float,
    request_id: str | None,
    user_id: str | None,
    secrets: Iterable[str] = (),
    confirmed: bool | None = None,
    input_required: bool = False,
) -> dict[str, Any]:
    """One audit line: who called which tool with what, how it ended, and what it touched. ``confirmed``: the
    person's answer where a ``confirm_mcp_tools`` rule asked (absent where none did); ``input_required``: this
    leg only asked (2026-07-28), its outcome ``input_required``, the retry carrying the answer gets its own line."""
    record: dict[str, Any] = {
        "time": datetime.datetime.fromtimestamp(started, datetime.timezone.utc).isoformat(timespec="milliseconds"),
        "request_id": request_id,
        "user_id": user_id,
        "tool": tool.name,
        "arguments": recorded_arguments(arguments, secrets),
        "outcome": "input_required" if input_required and error is None else outcome_of(error),
        "duration_ms": round(duration_seconds * 1000, 1),
    }
    record["history_id"] = history_of(tool, arguments or {}, result)
    ok = error is None
    record.update(effects(tool, arguments or {}, result) if ok else {kind: [] for kind in EFFECT_KINDS})
    record["touched"] = touched(tool, arguments or {}, result) if ok else {}
    if ok and isinstance(result, dict) and result.get("tool_id") and result.get("tool_version"):
        # The Galaxy tool the call resolved to: a short id given, the guid and version that ran.
        record["galaxy_tool"] = {"id": result["tool_id"], "version": result["tool_version"]}
    if confirmed is not None:
        record["confirmed"] = confirmed
    if error is not None:
        record["error"] = shortened(str(error).split("\n", 1)[0])
    return record


def task_cancel_record(*, started: float, duration_seconds: float, request_id: str | None, done: dict[str, Any] | None,
                       error: BaseException | None) -> dict[str, Any]:
    """The line of a ``tasks/cancel`` (MCP tasks): a protocol method, not a tool, that stops jobs as ``cancel_job``
    does. ``done``: the task's user, the tool that made it, the jobs stopped and invocations cancelled (None when
    the handle was not found: no user to name). The handle itself is not written (a bearer of the task)."""
    done = done or {}
    by_kind = {"job": list(done.get("job_ids") or []), "invocation": list(done.get("invocation_ids") or [])}
    by_kind = {kind: ids for kind, ids in by_kind.items() if ids}
    record: dict[str, Any] = {
        "time": datetime.datetime.fromtimestamp(started, datetime.timezone.utc).isoformat(timespec="milliseconds"),
        "request_id": request_id,
        "user_id": done.get("user_id"),
        "tool": "tasks/cancel",
        "arguments": {"task_of": done.get("tool")},
        "outcome": outcome_of(error),
        "duration_ms": round(duration_seconds * 1000, 1),
        "history_id": None,
        **{kind: [] for kind in EFFECT_KINDS},
    }
    record["changed"] = [found for ids in by_kind.values() for found in ids]
    record["touched"] = {"changed": by_kind} if by_kind else {}
    if error is not None:
        record["error"] = shortened(str(error).split("\n", 1)[0])
    return record
