"""The audit trail: one JSON line per MCP tool call, written by the outermost middleware.

``AuditTrail`` sits outside every other middleware of Galaxy's MCP server, so it sees each
``tools/call`` as the client sent it and how it ended, refusals by inner middleware (no key,
a policy) included. The line (``core.audit``) names the caller by the encoded id of the API
key's user, looked up once per key and kept for a minute. ``audit_sink`` turns the admin's
setting into where lines go: a file (``core.audit_file``, rotated, safe across processes) or,
for ``logger:NAME``, that logger of Galaxy's logging configuration.
"""

import hashlib
import json
import logging
import os
import time
import uuid

import anyio
from fastmcp.server.middleware import Middleware

from galaxy_mcp_analysis.core.audit import audit_record
from galaxy_mcp_analysis.core.audit_file import AuditFile
from galaxy_mcp_analysis.core.settings import Settings
from galaxy_mcp_analysis.mcp.api_key import (
    API_KEY_ARGUMENT,
    api_key_from_request,
)
from galaxy_mcp_analysis.oauth.caller import audit_fields as oauth_audit_fields

log = logging.getLogger(__name__)
LOGGER_PREFIX = "logger:"
#: How long a key's user id is reused before it is looked up again.
USER_TTL_SECONDS = 60.0
#: Keys remembered at most (bad keys included); the memory is dropped when full.
MAX_REMEMBERED_KEYS = 4096


class LoggerSink:
    def __init__(self, name: str):
        self.logger = logging.getLogger(name)

    def write_line(self, line: str) -> None:
        self.logger.info(line)

    def check(self) -> None:
        pass


#: The galaxy.yml option (under ``galaxy:``) read when GALAXY_MCP_ANALYSIS_AUDIT_LOG is not set.
AUDIT_LOG_OPTION = "mcp_analysis_audit_log"


def audit_target(settings: Settings, gx_app=None) -> str:
    """The admin's audit setting: the environment variable, else galaxy.yml's option, else '' (off)."""
    if settings.audit_log or gx_app is None:
        return settings.audit_log
    return str(gx_app.config.config_dict.get(AUDIT_LOG_OPTION) or "").strip()


def audit_sink(settings: Settings, gx_app=None):
    """Where audit lines go, or None when the admin switched the trail off (the default)."""
    target = audit_target(settings, gx_app)
    if not target:
        return None
    if target.startswith(LOGGER_PREFIX):
        return LoggerSink(target[len(LOGGER_PREFIX) :] or "galaxy_mcp_analysis.audit")
    return AuditFile(target, settings.audit_log_max_bytes, settings.audit_log_backups)


def outermost_audit_trail(settings: Settings):
    """What adds the trail to a built MCP server. The variable's file is opened now, galaxy.yml's when
    the server is built (Galaxy's configuration is read by then); OSError if it cannot be written."""
    early = audit_sink(settings)
    if early is not None:
        early.check()

    def add(mcp, gx_app):
        sink = early or audit_sink(settings, gx_app)
        if sink is None:
            return
        if early is None:
            sink.check()
        # The first middleware in the list is the outermost: every call is recorded, other middleware's refusals too.
        mcp.middleware.insert(0, AuditTrail(gx_app, sink))

    return add


class CallerIds:
    """The encoded id of an API key's user, looked up through Galaxy's UserManager and remembered briefly."""

    def __init__(self, gx_app):
        self.gx_app = gx_app
        self._known: dict[str, tuple[str | None, float]] = {}

    async def user_id(self, api_key: str | None) -> str | None:
        if not api_key:
            return None
        digest = hashlib.sha256(api_key.encode()).hexdigest()
        known = self._known.get(digest)
        now = time.monotonic()
        if known and known[1] > now:
            return known[0]
        user_id = await anyio.to_thread.run_sync(self._look_up, api_key)
        if len(self._known) >= MAX_REMEMBERED_KEYS:
            self._known.clear()
        self._known[digest] = (user_id, now + USER_TTL_SECONDS)
        return user_id

    def _look_up(self, api_key: str) -> str | None:
        from galaxy.managers.users import UserManager

        model = self.gx_app.model
        request_id = f"mcp-audit-{uuid.uuid4().hex}"
        token = model.set_request_id(request_id)  # a session of its own, closed below
        try:
            user = self.gx_app[UserManager].by_api_key(api_key=api_key)
            if user is None or getattr(user, "bootstrap_admin_user", False) or user.id is None:
                return None
            return self.gx_app.security.encode_id(user.id)
        except Exception:  # a bad key: the call itself reports it; the line has no user
            return None
        finally:
            model.unset_request_id(request_id)
            token.var.reset(token)


def _request_id(context) -> str | None:
    try:
        return context.fastmcp_context.request_id
    except (AttributeError, RuntimeError):
        return None


def _caller_key(arguments: dict) -> str | None:
    try:
        from_request = api_key_from_request()
    except Exception:  # two different header keys: the call is refused; no caller to name
        from_request = None
    given = arguments.get(API_KEY_ARGUMENT)
    return (given if isinstance(given, str) and given else None) or from_request


class AuditTrail(Middleware):
    """Append one line per ``tools/call`` to ``sink``; a failing write is logged, never fails the call."""

    def __init__(self, gx_app, sink):
        self.sink = sink
        self.callers = CallerIds(gx_app)

    async def on_call_tool(self, context, call_next):
        started, clock = time.time(), time.perf_counter()
        error, result = None, None
        try:
            result = await call_next(context)
            return result
        except BaseException as exc:  # a cancelled call is recorded too
            error = exc
            raise
        finally:
            await self._record(context, error, result, started, time.perf_counter() - clock)

    async def _record(self, context, error, result, started, duration) -> None:
        message = context.message
        arguments = dict(message.arguments or {})
        try:
            key = _caller_key(arguments)
            record = audit_record(
                tool=message.name,
                arguments=arguments,
                error=error,
                result=getattr(result, "structured_content", None),
                started=started,
                duration_seconds=duration,
                request_id=_request_id(context),
                user_id=await self.callers.user_id(key),
                secrets=(key,) if key else (),
            )
            record["pid"] = os.getpid()  # the serving process (gunicorn worker), as in Galaxy's log lines
            record.update(oauth_audit_fields())  # the OAuth client and grant (null for API keys)
            self.sink.write_line(json.dumps(record, separators=(",", ":"), default=str))
        except Exception:
            log.exception("galaxy-mcp-analysis: could not write the audit line of a %s call", message.name)
