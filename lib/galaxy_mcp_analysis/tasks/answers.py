"""The ``tools/call`` answer in task form: ``TaskAnswers``, the outermost middleware of the patch set.

For a call of a task-capable tool (``core.tasks.TASK_TOOLS``) from a client that declared
``io.modelcontextprotocol/tasks`` in the request (2026-07-28 only), with its credential in a header (the
``tasks/*`` requests have no ``api_key`` argument): the call runs exactly as for any client, and when its
result names jobs that have not all ended (or a workflow invocation still running), that result is kept with
a new task and the client gets the task (``resultType: "task"``) instead. Any other call, an error, or a
call whose jobs have all ended already: the answer goes out unchanged.

Why a middleware and not the extension's ``intercept_tool_call``: FastMCP runs the interceptors inside the
whole middleware chain, so a task answered there would pass through the masking of the admin's policy, the
shaping of text blocks and the audit trail as something that is not a tool result (the audit line would lose
the call's jobs, the kept result would be unmasked). Outermost, the call is audited as today and the kept
result is byte for byte what the client would have received.
"""

from fastmcp.server.middleware import Middleware
from fastmcp.tools.base import (
    InputRequiredToolResult,
    ToolResult,
)
from mcp_types import CallToolResult
from mcp_types.methods import serialize_server_result
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from galaxy_mcp_analysis.core.audit import (
    effects,
    touched,
)
from galaxy_mcp_analysis.core.tasks import (
    TASK_TOOLS,
    TASKS_EXTENSION,
)
from galaxy_mcp_analysis.mcp.api_key import api_key_from_request
from galaxy_mcp_analysis.mcp.session import in_own_session
from galaxy_mcp_analysis.tasks.service import TaskService


class TaskAnswers(Middleware):
    def __init__(self, gx_app, service: TaskService, facts: dict):
        self.gx_app = gx_app
        self.service = service
        self.facts = facts

    async def on_call_tool(self, context, call_next):
        result = await call_next(context)
        name = context.message.name
        version = _task_protocol(context.fastmcp_context) if name in TASK_TOOLS else None
        if version is None or not _plain_result(result) or name not in self.facts:
            return result
        arguments, facts, made = dict(context.message.arguments or {}), self.facts[name], result.structured_content
        job_ids = effects(facts, arguments, made)["jobs"]
        invocation_ids = touched(facts, arguments, made).get("created", {}).get("invocation", [])
        credential = api_key_from_request()
        if not (job_ids or invocation_ids) or not credential:
            return result
        kept = _wire_result(result, version)
        task = await in_own_session(self.gx_app, self.service.open, credential, name, job_ids, invocation_ids, kept)
        return result if task is None else task


def _task_protocol(fastmcp_context) -> str | None:
    """The request's protocol version if its client declared the tasks extension in it, else None."""
    request = fastmcp_context.request_context if fastmcp_context is not None else None
    if request is None or request.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return None
    return request.protocol_version if fastmcp_context.client_extension_settings(TASKS_EXTENSION) is not None else None


def _plain_result(result) -> bool:
    return (isinstance(result, ToolResult) and not isinstance(result, InputRequiredToolResult)
            and not result.is_error and isinstance(result.structured_content, dict))


def _wire_result(result: ToolResult, version: str) -> dict:
    """The ``CallToolResult`` as the client would have received it on ``version``."""
    answered = result.to_mcp_result()
    if isinstance(answered, tuple):
        answered = CallToolResult(content=answered[0], structured_content=answered[1])
    elif not isinstance(answered, CallToolResult):
        answered = CallToolResult(content=answered)
    dumped = answered.model_dump(by_alias=True, mode="json", exclude_none=True)
    return serialize_server_result("tools/call", version, dumped)
