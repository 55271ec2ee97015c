"""Reading an audit trail in tests: every line of a log and its rotated files, the last line, a line's shape."""

import json
import os
from pathlib import Path

#: The fields the contract promises on every line (doc/admin-guide.md, "Audit trail").
AUDIT_FIELDS = ("time", "request_id", "user_id", "tool", "arguments", "outcome", "duration_ms", "history_id",
                "created", "changed", "deleted", "purged", "jobs")


def audit_lines(path: Path) -> list[dict]:
    """Every line of ``path`` and its rotations (``path.1`` ... oldest first), parsed; a torn line fails here."""
    path = Path(path)
    rotated = sorted((p for p in path.parent.glob(path.name + ".*") if p.suffix[1:].isdigit()),
                     key=lambda p: -int(p.suffix[1:]))
    lines = []
    for file in [*rotated, path]:
        if file.exists():
            lines += [json.loads(line) for line in file.read_text().splitlines()]
    return lines


def last_audit_line(path: Path) -> dict:
    """The newest line of ``path`` (read from its end, cheap on a large log)."""
    with open(path, "rb") as handle:
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        handle.seek(max(0, size - 65536))
        tail = handle.read().rstrip(b"\n")
    return json.loads(tail.rsplit(b"\n", 1)[-1])


def complete(line: dict) -> bool:
    """Whether a line carries every promised field with its type."""
    return (all(field in line for field in AUDIT_FIELDS) and isinstance(line["duration_ms"], (int, float))
            and all(isinstance(line[kind], list) for kind in ("created", "changed", "deleted", "purged", "jobs"))
            and isinstance(line["tool"], str) and isinstance(line["outcome"], str) and bool(line["time"]))
