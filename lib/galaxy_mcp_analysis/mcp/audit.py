"""The audit trail: one JSON line per MCP tool call, written by the outermost middleware.

``AuditTrail`` sits outside every other middleware of Galaxy's MCP server, so it sees each
``tools/call`` as the client sent it and how it ended, refusals by inner middleware (no key,
a policy) included. The line (``core.audit``, from the tool's row of the facts table) names the
caller by the encoded id of the request's user (``mcp.caller``: one lookup per request, which the
policy and the tool share). ``audit_sink`` turns the admin's
setting into where lines go: a file (``core.audit_file``, rotated, safe across processes) or,
for ``logger:NAME``, that logger of Galaxy's logging configuration.
"""

import json
import logging
import os
import time

from fastmcp.server.middleware import Middleware
from fastmcp.tools.base import InputRequiredToolResult

from galaxy_mcp_analysis.core.audit import audit_record
from galaxy_mcp_analysis.core.audit_file import AuditFile
from galaxy_mcp_analysis.core.settings import Settings
from galaxy_mcp_analysis.core.tool_facts import ToolFacts
from galaxy_mcp_analysis.mcp.api_key import (
    API_KEY_ARGUMENT,
    api_key_from_request,
)
from galaxy_mcp_analysis.mcp.caller import (
    begin,
    end,
)
from galaxy_mcp_analysis.mcp.consent import consent_verdicts
from galaxy_mcp_analysis.mcp.session import in_own_session
from galaxy_mcp_analysis.oauth.caller import audit_fields as oauth_audit_fields

log = logging.getLogger(__name__)
LOGGER_PREFIX = "logger:"


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


def audit_trail_builder(settings: Settings, facts: dict[str, ToolFacts]):
    """What makes the trail's middleware for a built MCP server (None: the trail is off). The variable's file
    is opened now, galaxy.yml's when the server is built (Galaxy's configuration is read by then); OSError if
    it cannot be written. Activation places it (mcp.stack: outermost)."""
    early = audit_sink(settings)
    if early is not None:
        early.check()

    def build(gx_app) -> "AuditTrail | None":
        sink = early or audit_sink(settings, gx_app)
        if sink is None:
            return None
        if early is None:
            sink.check()
        return AuditTrail(gx_app, sink, facts)

    return build


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


def write_record(sink, record: dict) -> None:
    """One line to ``sink``: the record, the serving process (gunicorn worker, as in Galaxy's log lines) and the
    OAuth client and grant of the request (null for API keys)."""
    record["pid"] = os.getpid()
    record.update(oauth_audit_fields())
    sink.write_line(json.dumps(record, separators=(",", ":"), default=str))


class AuditTrail(Middleware):
    """Append one line per ``tools/call`` to ``sink``; a failing write is logged, never fails the call."""

    def __init__(self, gx_app, sink, facts: dict[str, ToolFacts]):
        self.gx_app = gx_app
        self.sink = sink
        self.facts = facts

    async def on_call_tool(self, context, call_next):
        started, clock = time.time(), time.perf_counter()
        error, result = None, None
        key = _caller_key(dict(context.message.arguments or {}))
        caller, token = begin(self.gx_app, key)  # resolved inside, in the call's session (mcp.caller)
        with consent_verdicts() as verdicts:  # a confirm_mcp_tools rule's answer (mcp.consent)
            try:
                result = await call_next(context)
                return result
            except BaseException as exc:  # a cancelled call is recorded too
                error = exc
                raise
            finally:
                end(token)
                confirmed = verdicts[-1] if verdicts else None
                await self._record(context, caller, error, result, started, time.perf_counter() - clock, confirmed)

    async def _record(self, context, caller, error, result, started, duration, confirmed=None) -> None:
        message = context.message
        try:
            if caller.credential and not caller.resolved:  # refused before the caller was looked up
                await in_own_session(self.gx_app, caller.user)
            record = audit_record(
                tool=self.facts.get(message.name) or ToolFacts(message.name, "", read_only=False),
                arguments=dict(message.arguments or {}),
                error=error,
                result=getattr(result, "structured_content", None),
                started=started,
                duration_seconds=duration,
                request_id=_request_id(context),
                user_id=caller.user_id,
                secrets=(caller.credential,) if caller.credential else (),
                confirmed=confirmed,
                input_required=isinstance(result, InputRequiredToolResult),
            )
            write_record(self.sink, record)
        except Exception:
            log.exception("galaxy-mcp-analysis: could not write the audit line of a %s call", message.name)
