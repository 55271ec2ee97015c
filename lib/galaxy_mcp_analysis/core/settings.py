"""Admin-facing configuration of the patch set, read from the environment.

Environment variables work the same under uvicorn, gunicorn and gravity
(``gravity: gunicorn: environment:``) without touching Galaxy's config schema.
Every option is listed in README.md; this module is the one place they are read.
"""

import os
from dataclasses import (
    dataclass,
    fields,
)

ENV_PREFIX = "GALAXY_MCP_ANALYSIS_"
MIB = 1024 * 1024


class SettingsError(ValueError):
    """An option has a value the patch set cannot use."""


@dataclass(frozen=True)
class Settings:
    #: Upper bound on ``max_bytes`` of one ranged dataset read; larger requests are clamped.
    max_read_bytes: int = MIB
    #: Upper bound on ``timeout_seconds`` of one ``wait_for_jobs`` call (each waiting call holds a worker thread).
    max_wait_seconds: int = 120
    #: Upper bound on the UTF-8 size of ``create_dataset_from_text`` content; larger content is refused.
    max_paste_bytes: int = MIB
    #: Start even on a Galaxy release or shape the self-checks did not verify (skips failing patches).
    allow_unverified: bool = False
    #: The admin's policy file (rules, limits, masks, tool sets); unset: galaxy.yml's option, else no policy.
    policy_file: str = ""
    #: The audit trail: a file path (one JSON line per MCP call), ``logger:NAME`` (Galaxy's logging), or off.
    audit_log: str = ""
    #: The audit file is rotated when a line would take it past this size (``<file>.1`` ... ``<file>.N``).
    audit_log_max_bytes: int = 64 * MIB
    #: How many rotated audit files are kept.
    audit_log_backups: int = 5
    #: OAuth 2.1 sign-in for /api/mcp on Galaxy's own login (also galaxy.yml ``mcp_analysis_oauth: true``).
    oauth: bool = False

    @classmethod
    def from_environ(cls, environ=None) -> "Settings":
        environ = os.environ if environ is None else environ
        values = {}
        for field in fields(cls):
            raw = environ.get(ENV_PREFIX + field.name.upper())
            if raw is None or raw == "":
                continue
            values[field.name] = _parse(field.name, field.type, raw)
        return cls(**values)


def _parse(name: str, kind, raw: str):
    variable = ENV_PREFIX + name.upper()
    if kind in (str, "str"):
        return raw.strip()
    if kind in (bool, "bool"):
        lowered = raw.strip().lower()
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off"):
            return False
        raise SettingsError(f"{variable}={raw!r} is not a boolean; use true or false.")
    try:
        value = int(raw)
    except ValueError:
        raise SettingsError(f"{variable}={raw!r} is not an integer.") from None
    if value < 1:
        raise SettingsError(f"{variable}={raw!r} must be at least 1.")
    return value
