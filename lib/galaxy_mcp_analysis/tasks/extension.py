"""The FastMCP server extension ``io.modelcontextprotocol/tasks``: its capability and its three methods.

Registered on Galaxy's built server (``activation/tasks.py``), it advertises the extension (``server/discover``
on 2026-07-28; the SDK leaves it out of a handshake's capabilities) and serves ``tasks/get``, ``tasks/update``
and ``tasks/cancel`` on 2026-07-28 only. Each checks what the extension requires of a request (the client
declared the extension in it; the ``Mcp-Name`` header, when sent, is the ``taskId``), then runs
``service.TaskService`` in a worker thread with a database session of its own. A sign-in's token needs
``galaxy:write`` for ``tasks/cancel`` (as for ``cancel_job``), and the admin's rules for ``cancel_job`` hold for it. The ``tools/call`` answer in
task form is ``answers.TaskAnswers`` (a middleware, outermost: see there why not this extension's interceptor).
"""

import logging
import time
from collections.abc import Callable

from fastmcp.server.dependencies import get_http_request
from fastmcp.server.extensions import (
    MethodBinding,
    read_client_extension_settings,
    ServerExtension,
)
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import (
    decode_header_value,
    MCP_NAME_HEADER,
)
from mcp_types.jsonrpc import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from galaxy_mcp_analysis.core import oauth as scope_rules
from galaxy_mcp_analysis.core.audit import task_cancel_record
from galaxy_mcp_analysis.core.errors import (
    AnalysisError,
    ErrorCode,
)
from galaxy_mcp_analysis.core.tasks import TASKS_EXTENSION
from galaxy_mcp_analysis.mcp.api_key import api_key_from_request
from galaxy_mcp_analysis.mcp.errors import format_error
from galaxy_mcp_analysis.mcp.session import in_own_session
from galaxy_mcp_analysis.oauth.caller import current_caller
from galaxy_mcp_analysis.tasks.service import (
    TaskNotFound,
    TaskService,
)
from galaxy_mcp_analysis.tasks.wire import (
    TaskParams,
    UpdateTaskParams,
)

_VERSIONS = frozenset(MODERN_PROTOCOL_VERSIONS)
log = logging.getLogger(__name__)


class GalaxyTasks(ServerExtension):
    identifier = TASKS_EXTENSION

    def __init__(self, gx_app, service: TaskService, audit: Callable[[dict], None] | None = None):
        """``audit``: writes one audit line (the trail's sink, ``mcp.audit.write_record``); None when it is off."""
        self.gx_app = gx_app
        self.service = service
        self.audit = audit

    def methods(self):
        return [
            MethodBinding("tasks/get", TaskParams, self._get, _VERSIONS),
            MethodBinding("tasks/update", UpdateTaskParams, self._update, _VERSIONS),
            MethodBinding("tasks/cancel", TaskParams, self._cancel, _VERSIONS),
        ]

    async def _get(self, ctx, params: TaskParams):
        return await self._answer(ctx, params, self.service.get)

    async def _update(self, ctx, params: UpdateTaskParams):
        return await self._answer(ctx, params, self.service.update)

    async def _cancel(self, ctx, params: TaskParams):
        """Stops the task's jobs (``service.cancel``); one audit line whatever the outcome, as a tool call has."""
        started, clock = time.time(), time.perf_counter()
        done, error = None, None
        try:
            caller = current_caller()  # a sign-in's token: stopping jobs is a write, as cancel_job is
            if caller is not None and not scope_rules.allows(caller.scopes, read_only=False):
                raise MCPError(code=INVALID_PARAMS, message=f"[FORBIDDEN] tasks/cancel needs the scope "
                               f"{scope_rules.needed_scope(False)}; this sign-in granted {' '.join(caller.scopes)}.")
            done = await self._answer(ctx, params, self.service.cancel)
            refusal = done.pop("refusal", None)
            if refusal is not None:
                raise MCPError(code=INVALID_PARAMS, message=format_error(refusal.code, refusal.message,
                                                                         refusal.suggestion))
            return {}
        except MCPError as refused:
            error = refused
            raise
        finally:
            if self.audit is not None:
                self._audit_cancel(ctx, started, time.perf_counter() - clock, done, error)

    async def _answer(self, ctx, params: TaskParams, action):
        if read_client_extension_settings(ctx, TASKS_EXTENSION) is None:
            raise MCPError(
                code=MISSING_REQUIRED_CLIENT_CAPABILITY,
                message=f"Missing required client capability: declare the extension {TASKS_EXTENSION} in the request.",
                data={"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
            )
        _check_name_header(params.task_id)
        try:
            credential = api_key_from_request()
            return await in_own_session(self.gx_app, action, credential, params.task_id)
        except TaskNotFound as refusal:
            raise MCPError(code=INVALID_PARAMS, message=str(refusal)) from None
        except AnalysisError as refusal:  # coded as a tool's error is
            raise MCPError(code=INVALID_PARAMS, message=format_error(refusal.code, refusal.message,
                                                                     refusal.suggestion)) from None

    def _audit_cancel(self, ctx, started: float, duration: float, done: dict | None, error: MCPError | None) -> None:
        try:
            self.audit(task_cancel_record(started=started, duration_seconds=duration, request_id=_request_id(ctx),
                                          done=done, error=_coded(error)))
        except Exception:
            log.exception("galaxy-mcp-analysis: could not write the audit line of a tasks/cancel")


def _coded(error: MCPError | None) -> Exception | None:
    """The error as an audit line's outcome reads it (``[CODE] message``): our coded refusals as they are; the
    extension's own: a handle not found or expired (-32602) NOT_FOUND, a request breaking its rules VALIDATION_ERROR."""
    if error is None or error.message.startswith("["):
        return None if error is None else Exception(error.message)
    code = ErrorCode.NOT_FOUND if error.code == INVALID_PARAMS else ErrorCode.VALIDATION_ERROR
    return Exception(format_error(code, error.message))


def _request_id(ctx) -> str | None:
    try:
        found = ctx.request_id
    except (AttributeError, RuntimeError):
        return None
    return None if found is None else str(found)


def _check_name_header(task_id: str) -> None:
    """A routing header that names another task than the body is refused (SEP-2243, as SEP-2663 extends it)."""
    try:
        header = get_http_request().headers.get(MCP_NAME_HEADER)
    except RuntimeError:  # not over HTTP
        return
    if header is not None and decode_header_value(header) != task_id:
        raise MCPError(code=HEADER_MISMATCH, message=f"The {MCP_NAME_HEADER} header does not match params.taskId.")
