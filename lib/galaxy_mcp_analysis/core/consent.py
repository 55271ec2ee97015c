"""Consent before the irreversible: the question put to the person, how an answer reads, what a No returns.

Pure (no Galaxy). The admin's rule key ``confirm_mcp_tools`` (``core.policy``: ``Policy.confirmation``)
says which calls ask first; ``operations.losses`` reads what such a call would lose (``Loss``) through
Galaxy's managers; ``mcp.consent`` asks through the client (``input_required`` on 2026-07-28,
``elicitation/create`` before) with the text and schema made here, and reads the answer with
``answered_yes``. Anything but an explicit Yes changes nothing.
"""

from collections.abc import (
    Iterable,
    Mapping,
)
from dataclasses import dataclass
from typing import Any

#: The key of our one input request in an ``input_required`` result (and of its answer).
INPUT_KEY = "confirm"
#: The one field of the form: a Yes is an accepted answer with this field true.
ANSWER_FIELD = "confirm"
#: At most this many lost items are named one by one; the rest are counted.
MAX_NAMED = 10


@dataclass(frozen=True)
class Loss:
    """One thing a call would lose: its kind (dataset, collection, workflow, page, job), its name, a detail."""

    kind: str
    name: str
    detail: str = ""
    #: Bytes on disk (datasets), None where it does not apply or is unknown.
    size: int | None = None

    def line(self) -> str:
        details = [part for part in (self.detail, readable_size(self.size) if self.size is not None else "") if part]
        return f"- {self.kind} {self.name!r}" + (f" ({', '.join(details)})" if details else "")


def readable_size(size: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB", "TB"):
        if size < 1024 or unit == "TB":
            return f"{size} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("not reached")


def _verb(tool: str, arguments: Mapping[str, Any], purging: bool) -> str:
    if purging:
        return "purge (delete for good, freeing the space; restore cannot bring it back)"
    if tool.startswith("cancel"):
        return "cancel (outputs discarded)"
    if tool.startswith("delete"):
        return "delete"
    return f"call {tool} on"


def question(tool: str, arguments: Mapping[str, Any], losses: Iterable[Loss], purging: bool, rule: str) -> str:
    """The text the person reads: what the call will do, item by item, and that nothing happens without a Yes."""
    losses = list(losses)
    verb = _verb(tool, arguments, purging)
    lines = [f"An assistant asks to {verb} the following in Galaxy ({tool}):" if losses
             else f"An assistant asks to run {tool} in Galaxy, which this server's rule {rule!r} asks you to confirm."]
    lines += [loss.line() for loss in losses[:MAX_NAMED]]
    if len(losses) > MAX_NAMED:
        lines.append(f"- and {len(losses) - MAX_NAMED} more")
    total = total_size(losses)
    if purging and total:
        lines.append(f"Space freed: {total}.")
    lines.append("Go ahead? Nothing changes unless you answer Yes.")
    return "\n".join(lines)


def total_size(losses: Iterable[Loss]) -> str:
    """The lost items' sizes summed, readable; '' when none has a size."""
    sizes = [loss.size for loss in losses if loss.size is not None]
    return readable_size(sum(sizes)) if sizes else ""


def requested_schema() -> dict[str, Any]:
    """The form: one boolean (an empty form renders badly in some clients)."""
    return {
        "type": "object",
        "properties": {ANSWER_FIELD: {"type": "boolean", "title": "Yes, go ahead", "default": False}},
        "required": [ANSWER_FIELD],
    }


def answered_yes(action: str | None, content: Mapping[str, Any] | None) -> bool:
    """Only an accepted form whose field is true is a Yes; decline, cancel, no answer or false are No."""
    return action == "accept" and isinstance(content, Mapping) and content.get(ANSWER_FIELD) is True


def declined_result(tool: str, rule: str, how: str) -> dict[str, Any]:
    """What the tool returns when the person did not say Yes: nothing was changed, and why."""
    return {
        "changed": False,
        "confirmed": False,
        "message": (f"Nothing was changed: {tool} needs the person's consent (rule {rule}) and the answer "
                    f"was {how}. Ask the person before calling it again."),
    }


def cannot_ask(tool: str, rule: str, entry: str, reason: str) -> tuple[str, str]:
    """The [FORBIDDEN] message and suggestion for a client that cannot put the question to its person."""
    message = (f"rule {rule}: {tool} must be confirmed by the person first (confirm_mcp_tools: {entry}), "
               f"and {reason}.")
    suggestion = ("Nothing was done. Use a client that can ask its user (MCP 2026-07-28 input_required with "
                  "elicitation, or elicitation on a session that can carry it), or ask the Galaxy admin.")
    return message, suggestion


def state_token(tool: str, user: str | None) -> str:
    """The ``requestState`` our question carries (sealed by the SDK, bound by it to the call's arguments)."""
    return f"consent:{tool}:{user or ''}"
