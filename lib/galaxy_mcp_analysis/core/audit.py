"""What one audit line says about one MCP tool call: pure, no Galaxy.

``audit_record`` builds the line (a dict, one JSON object per line in the trail) from the tool's
name, its arguments, how it ended and its structured result. The ids of what a call created,
changed, deleted or purged and of the jobs it started come from ``EFFECTS``, one entry per tool
that writes: paths into the call's arguments or result, each with the kind of object it names
(``touched`` keeps the kinds; the flat lists do not). A tool without an entry (every read)
records empty lists; ``test_every_writing_tool_has_an_effects_entry`` keeps the table complete.
"""

import datetime
import re
from collections.abc import Iterable
from typing import Any

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

_RUN = {
    "created": (("result.outputs[].id", "dataset"), ("result.output_collections[].id", "collection"),
                ("result.implicit_collections[].id", "collection")),
    "jobs": (("result.jobs[].id", "job"),),
}

#: Per tool that writes: which argument or result paths hold the ids of each kind of effect, and their kind.
#: ``result.a[].b``: field ``b`` of every element of the list ``a`` of the structured result.
EFFECTS: dict[str, dict[str, tuple[tuple[str, str], ...]]] = {
    # Galaxy's stock tools
    "run_tool": _RUN,
    "upload_file_from_url": _RUN,
    "run_user_tool": _RUN,
    "create_history": {"created": (("result.id", "history"),)},
    "invoke_workflow": {"created": (("result.id", "invocation"), ("result[].id", "invocation"))},
    "cancel_workflow_invocation": {"changed": (("result.invocation.id", "invocation"),
                                               ("arguments.invocation_id", "invocation"))},
    "import_workflow_from_iwc": {"created": (("result.id", "workflow"),)},
    "create_user_tool": {"created": (("result.uuid", "user_tool"),)},
    "delete_user_tool": {"deleted": (("arguments.uuid", "user_tool"),)},
    # the patch set's tools
    "create_dataset_from_text": {"created": (("result.dataset_id", "dataset"),), "jobs": (("result.job_id", "job"),)},
    "create_collection": {"created": (("result.collection_id", "collection"),
                                      ("result.copied_elements[].copy_id", "dataset"))},
    "rerun_job": _RUN,
    "cancel_job": {"changed": (("result.job_id", "job"),)},
    "update_dataset": {"changed": (("arguments.dataset_id", "dataset"),)},
    "update_collection": {"changed": (("result.collection_id", "collection"),)},
    "update_history": {"changed": (("arguments.history_id", "history"),)},
    # the items named, and (recursive) their collections' datasets; purged: see effects
    "delete_history_items": {"deleted": (("result.items[].id", "src"), ("result.deleted_items[].id", "src"))},
    "restore_history_items": {"changed": (("result.items[].id", "src"),)},
    "create_page": {"created": (("result.page_id", "page"),)},
    "update_page": {"changed": (("result.page_id", "page"), ("arguments.page_id", "page"))},
    "revert_page_revision": {"changed": (("result.page_id", "page"),),
                             "created": (("result.new_revision_id", "page_revision"),)},
    "delete_page": {"deleted": (("result.page_id", "page"),)},
    "restore_page": {"changed": (("result.page_id", "page"),)},
    "delete_workflow": {"deleted": (("result.workflow_id", "workflow"),)},
    "restore_workflow": {"changed": (("result.workflow_id", "workflow"),)},
    "create_workflow_from_history": {"created": (("result.workflow_id", "workflow"),)},
    "create_workflow": {"created": (("result.workflow_id", "workflow"),)},
}


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


def touched(tool: str, arguments: dict[str, Any], result: Any) -> dict[str, dict[str, list[str]]]:
    """What a successful call of ``tool`` touched, by effect then kind: ``{"created": {"dataset": [id]}}``."""
    purging = tool == "delete_history_items" and bool(arguments.get("purge"))
    found: dict[str, dict[str, list[str]]] = {}
    for effect, paths in EFFECTS.get(tool, {}).items():
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


def effects(tool: str, arguments: dict[str, Any], result: Any) -> dict[str, list[str]]:
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


def history_of(tool: str, arguments: dict[str, Any], result: Any) -> str | None:
    """The history a call acted in, when its arguments or its result name one (for "what happened to history X")."""
    if tool == "create_history" and isinstance(result, dict) and isinstance(result.get("id"), str):
        return result["id"]
    for source in (arguments, result if isinstance(result, dict) else {}):
        found = source.get("history_id")
        if isinstance(found, str) and found:
            return found
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
    tool: str,
    arguments: dict[str, Any] | None,
    error: BaseException | None,
    result: Any,
    started: float,
    duration_seconds: float,
    request_id: str | None,
    user_id: str | None,
    secrets: Iterable[str] = (),
) -> dict[str, Any]:
    """One audit line: who called which tool with what, how it ended, and what it touched."""
    record: dict[str, Any] = {
        "time": datetime.datetime.fromtimestamp(started, datetime.timezone.utc).isoformat(timespec="milliseconds"),
        "request_id": request_id,
        "user_id": user_id,
        "tool": tool,
        "arguments": recorded_arguments(arguments, secrets),
        "outcome": outcome_of(error),
        "duration_ms": round(duration_seconds * 1000, 1),
    }
    record["history_id"] = history_of(tool, arguments or {}, result)
    ok = error is None
    record.update(effects(tool, arguments or {}, result) if ok else {kind: [] for kind in EFFECT_KINDS})
    record["touched"] = touched(tool, arguments or {}, result) if ok else {}
    if error is not None:
        record["error"] = shortened(str(error).split("\n", 1)[0])
    return record
