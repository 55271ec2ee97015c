"""The patch that gives Galaxy's MCP server the tasks extension (``io.modelcontextprotocol/tasks``, issue 52).

On the built server: the tasks' table is created in Galaxy's database if missing (``tasks.store``), the
extension is registered (``tasks.extension``: capability, ``tasks/get``, ``tasks/update``, ``tasks/cancel``)
and ``TaskAnswers`` is placed outermost (``tasks.answers``). ``tasks/cancel`` keeps the admin's rules for
``cancel_job`` (``mcp.policy.refusal_outside_calls``). A client that does not declare the extension
in a request sees nothing of it.
"""

import functools
import inspect

from galaxy_mcp_analysis.activation.built_server import (
    add_server_customizer,
    check_mcp_tools,
)
from galaxy_mcp_analysis.core.settings import Settings


def check_tasks() -> str | None:
    from fastmcp import FastMCP
    from fastmcp.server.context import Context
    from fastmcp.server.extensions import (
        MethodBinding,
        ServerExtension,
    )
    from fastmcp.server.mixins.mcp_operations import MCPOperationsMixin
    from mcp.server.runner import ServerRunner
    from mcp_types import methods

    if not callable(getattr(FastMCP, "add_extension", None)) or not callable(getattr(ServerExtension, "methods", None)):
        return "FastMCP.add_extension or ServerExtension.methods is gone"
    if "protocol_versions" not in MethodBinding.__dataclass_fields__:
        return "fastmcp MethodBinding no longer takes protocol_versions"
    if not callable(getattr(Context, "client_extension_settings", None)):
        return "fastmcp Context.client_extension_settings is gone (a request's declared extensions)"
    if "not isinstance(result, ToolResult)" not in inspect.getsource(MCPOperationsMixin._on_call_tool):
        return "FastMCP's tools/call handler no longer hands a result that is not a ToolResult to the runner as is"
    if "CORE_RESULT_TYPES" not in inspect.getsource(ServerRunner._serialize):
        return "the SDK's runner no longer lets an extension's resultType through unsieved"
    if not callable(getattr(methods, "serialize_server_result", None)):
        return "mcp_types.methods.serialize_server_result is gone"
    from galaxy.agents.operations import AgentOperationsManager

    if not callable(getattr(AgentOperationsManager, "cancel_workflow_invocation", None)):
        return "Galaxy's AgentOperationsManager.cancel_workflow_invocation is gone (tasks/cancel of an invocation)"
    return check_mcp_tools()


def apply_tasks(settings: Settings) -> None:
    from galaxy_mcp_analysis import tools
    from galaxy_mcp_analysis.mcp.audit import (
        audit_sink,
        write_record,
    )
    from galaxy_mcp_analysis.mcp.policy import refusal_outside_calls
    from galaxy_mcp_analysis.mcp.policy_file import (
        policy_path,
        PolicySource,
    )
    from galaxy_mcp_analysis.mcp.stack import place
    from galaxy_mcp_analysis.tasks.answers import TaskAnswers
    from galaxy_mcp_analysis.tasks.extension import GalaxyTasks
    from galaxy_mcp_analysis.tasks.service import TaskService
    from galaxy_mcp_analysis.tasks.store import TaskStore

    def add_tasks(mcp, gx_app):
        store = TaskStore(gx_app.model.engine)
        store.create_table()
        source = PolicySource(policy_path(settings, gx_app), tools.TOOL_FACTS)  # checked by the mcp-policy patch
        cancel_job = tools.TOOL_FACTS["cancel_job"]
        service = TaskService(gx_app, store, settings.task_seconds, lambda credential: refusal_outside_calls(
            gx_app, source, cancel_job, credential, "tasks/cancel"))
        sink = audit_sink(settings, gx_app)  # the trail's own file or logger (mcp-audit checked it can write)
        mcp.add_extension(GalaxyTasks(gx_app, service, functools.partial(write_record, sink) if sink else None))
        place(mcp, TaskAnswers(gx_app, service, tools.TOOL_FACTS))

    add_server_customizer(add_tasks)
