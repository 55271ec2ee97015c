"""Admin-facing configuration of the patch set, read from the environment.

Environment variables work the same under uvicorn, gunicorn and gravity
(``gravity: gunicorn: environment:``) without touching Galaxy's config schema.
Every option is listed in README.md; this module is the one place they are read.
"""

import os
from dataclasses import (
    dataclass,
    field,
    fields,
    replace,
)

from galaxy_mcp_analysis.core.scalars import boolean_word

ENV_PREFIX = "GALAXY_MCP_ANALYSIS_"
#: The galaxy.yml form of a setting marked ``galaxy_yml`` (under ``galaxy:``; the variable wins).
GALAXY_YML_PREFIX = "mcp_analysis_"
MIB = 1024 * 1024
DAY = 24 * 3600


def _lifetime(default: int, low: int, high: int):
    """A sign-in lifetime in seconds: bounded, and settable in galaxy.yml too."""
    return field(default=default, metadata={"bounds": (low, high), "galaxy_yml": True})


class SettingsError(ValueError):
    """An option has a value the patch set cannot use."""


@dataclass(frozen=True)
class Settings:
    #: Upper bound on ``max_bytes`` of one ranged dataset read; larger requests are clamped.
    max_read_bytes: int = MIB
    #: Upper bound on ``timeout_seconds`` of one ``wait_for_jobs`` call (each waiting call holds a worker thread).
    max_wait_seconds: int = 120
    #: Upper bound on the UTF-8 size of ``create_dataset_from_text`` content, and of one ``create_collection``
    #: call's pasted contents together; larger content is refused.
    max_paste_bytes: int = MIB
    #: Largest file one ``create_upload_url`` URL takes (a caller may ask for less, never more).
    max_upload_bytes: int = 50 * 1024 * MIB
    #: How long an upload URL stays valid, in seconds (10 s to 24 h).
    upload_url_seconds: int = field(default=900, metadata={"bounds": (10, DAY)})
    #: How long an MCP task (a long call's handle, issue 52) can be polled, from its creation: 1 min to 90 days.
    task_seconds: int = field(default=7 * DAY, metadata={"bounds": (60, 90 * DAY)})
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
    #: Lifetime of an OAuth access token (``expires_in``): 10 s to 24 h.
    oauth_access_token_seconds: int = _lifetime(3600, 10, DAY)
    #: Lifetime of an OAuth refresh token (a new one at every refresh): at least the access token's, at most 365 days.
    oauth_refresh_token_seconds: int = _lifetime(30 * DAY, 10, 365 * DAY)
    #: Lifetime of an authorization code (single use): 10 s to 10 min (RFC 6749 §4.1.2's maximum).
    oauth_code_seconds: int = _lifetime(300, 10, 600)
    #: How long a consent page stays valid: 1 min to 1 h.
    oauth_consent_seconds: int = _lifetime(600, 60, 3600)
    #: Development only (make serve and the tests switch it on): a client metadata document may also be
    #: fetched over http, or https, from a loopback host. Off, only https from public addresses.
    oauth_development: bool = field(default=False, metadata={"galaxy_yml": True})

    def __post_init__(self):
        if self.oauth_refresh_token_seconds < self.oauth_access_token_seconds:
            raise SettingsError(
                f"{ENV_PREFIX}OAUTH_REFRESH_TOKEN_SECONDS ({self.oauth_refresh_token_seconds}) must be at least "
                f"{ENV_PREFIX}OAUTH_ACCESS_TOKEN_SECONDS ({self.oauth_access_token_seconds}): a refresh token "
                "outlives the access tokens it renews (galaxy.yml: mcp_analysis_oauth_..._seconds).")

    @classmethod
    def from_environ(cls, environ=None) -> "Settings":
        environ = os.environ if environ is None else environ
        values = {}
        for field in fields(cls):
            raw = environ.get(ENV_PREFIX + field.name.upper())
            if raw is None or raw == "":
                continue
            values[field.name] = _parse(field, raw, ENV_PREFIX + field.name.upper())
        return cls(**values)

    def with_galaxy_yml(self, options: dict, environ=None) -> "Settings":
        """These settings with galaxy.yml's ``mcp_analysis_<name>`` for each setting marked ``galaxy_yml``
        that no variable sets (``options``: Galaxy's ``config_dict``); SettingsError naming the key."""
        environ = os.environ if environ is None else environ
        values = {}
        for field in fields(self):
            raw = options.get(GALAXY_YML_PREFIX + field.name)
            by_variable = environ.get(ENV_PREFIX + field.name.upper())
            if not field.metadata.get("galaxy_yml") or by_variable or raw in (None, ""):
                continue
            values[field.name] = _parse(field, str(raw), f"galaxy.yml {GALAXY_YML_PREFIX}{field.name}")
        return replace(self, **values) if values else self


def _parse(field, raw: str, variable: str):
    kind = field.type
    if kind in (str, "str"):
        return raw.strip()
    if kind in (bool, "bool"):
        said = boolean_word(raw)
        if said is not None:
            return said
        raise SettingsError(f"{variable}={raw!r} is not a boolean; use true or false.")
    try:
        value = int(raw)
    except ValueError:
        raise SettingsError(f"{variable}={raw!r} is not an integer.") from None
    low, high = field.metadata.get("bounds", (1, None))
    if value < low or (high is not None and value > high):
        allowed = f"at least {low}" if high is None else f"from {low} to {high}"
        allowed += " (seconds)" if field.name.endswith("_seconds") else ""
        raise SettingsError(f"{variable}={raw!r} must be {allowed}.")
    return value
