"""Patches of who may call what: keys from headers, the admin's policy file, the audit trail."""

import inspect
import types

from galaxy_mcp_analysis.activation.built_server import (
    add_server_customizer,
    check_mcp_tools,
    check_request_session,
)
from galaxy_mcp_analysis.activation.registry import PatchSetRefused
from galaxy_mcp_analysis.core.settings import Settings


def check_header_auth() -> str | None:
    from fastmcp.server import dependencies
    from fastmcp.server.middleware import MiddlewareContext
    from fastmcp.server.transforms import Transform
    from fastmcp.tools.base import Tool
    from galaxy.webapps.galaxy.api import mcp as galaxy_mcp

    if not callable(getattr(dependencies, "get_http_request", None)):
        return "fastmcp.server.dependencies.get_http_request is gone"
    if not callable(getattr(MiddlewareContext, "copy", None)):
        return "fastmcp MiddlewareContext.copy is gone (the middleware passes a call on with the key filled in)"
    if not all(callable(getattr(Transform, name, None)) for name in ("list_tools", "get_tool")):
        return "fastmcp Transform.list_tools/get_tool are gone"
    if "parameters" not in Tool.model_fields:
        return "fastmcp Tool.parameters is gone"
    tool_code = [
        const
        for const in inspect.unwrap(galaxy_mcp.get_mcp_app).__code__.co_consts
        if isinstance(const, types.CodeType) and const.co_name.isidentifier() and "ctx" in const.co_varnames
    ]
    if len(tool_code) < 37 or any("api_key" not in code.co_varnames[: code.co_argcount] for code in tool_code):
        return "a stock MCP tool no longer takes its key as the api_key argument"
    return check_mcp_tools()


def apply_header_auth(settings: Settings) -> None:
    from galaxy_mcp_analysis.mcp.api_key import (
        HeaderApiKey,
        OptionalApiKey,
    )

    from galaxy_mcp_analysis.mcp.caller import CallerOfRequest
    from galaxy_mcp_analysis.mcp.stack import place

    def accept_header_keys(mcp, gx_app):
        place(mcp, HeaderApiKey())
        place(mcp, CallerOfRequest(gx_app))
        mcp.add_transform(OptionalApiKey())

    add_server_customizer(accept_header_keys)


def check_policy() -> str | None:
    from fastmcp.server.middleware import Middleware
    from galaxy.config import GalaxyAppConfiguration
    from galaxy.managers.users import UserManager
    from galaxy.model import User
    from galaxy.tools import Tool

    if not hasattr(Middleware, "on_list_tools"):
        return "fastmcp Middleware.on_list_tools is gone"
    if not callable(getattr(UserManager, "by_api_key", None)):
        return "galaxy.managers.users.UserManager.by_api_key is gone (the policy identifies callers by key)"
    for owner, name in ((User, "all_roles"), (Tool, "get_panel_section"), (GalaxyAppConfiguration, "is_admin_user")):
        if not callable(getattr(owner, name, None)):
            return f"{owner.__module__}.{owner.__name__}.{name} is gone"
    return check_header_auth()  # the caller's key comes the same way


def apply_policy(settings: Settings) -> None:
    from galaxy_mcp_analysis import tools
    from galaxy_mcp_analysis.activation.registry import announce
    from galaxy_mcp_analysis.core.policy import PolicyError
    from galaxy_mcp_analysis.mcp.audit import audit_target
    from galaxy_mcp_analysis.mcp.consent import ConsentBeforeLoss
    from galaxy_mcp_analysis.mcp.policy import PolicyRules
    from galaxy_mcp_analysis.mcp.stack import place
    from galaxy_mcp_analysis.mcp.policy_file import (
        admin_rules_line,
        check_policy_file,
        policy_path,
        PolicySource,
    )

    def validated(path):
        try:
            check_policy_file(path, tools.TOOL_FACTS)  # a rule may name only a served tool or a class
        except PolicyError as error:
            raise PatchSetRefused(f"galaxy-mcp-analysis refuses to start Galaxy: {error}") from None
        return path

    validated(policy_path(settings))  # the variable's file, before Galaxy builds anything

    def enforce_policy(mcp, gx_app):
        path = validated(policy_path(settings, gx_app))
        source = PolicySource(path, tools.TOOL_FACTS)
        place(mcp, PolicyRules(gx_app, source, tools.TOOL_FACTS))
        place(mcp, ConsentBeforeLoss(gx_app, source, tools.TOOL_FACTS))  # confirm_mcp_tools (doc/admin-guide.md)
        announce(admin_rules_line(path, audit_target(settings, gx_app), tools.TOOL_FACTS))

    add_server_customizer(enforce_policy)


def check_audit_trail() -> str | None:
    from fastmcp import FastMCP

    if not isinstance(getattr(FastMCP("audit-self-check"), "middleware", None), list):
        return "FastMCP.middleware is no longer the list of middleware, outermost first"
    return check_request_session()  # the same hooks: on_call_tool, a request id for its own user lookup


def apply_audit_trail(settings: Settings) -> None:
    from galaxy_mcp_analysis import tools
    from galaxy_mcp_analysis.mcp.audit import (
        AUDIT_LOG_OPTION,
        audit_target,
        audit_trail_builder,
    )
    from galaxy_mcp_analysis.mcp.stack import place

    def unwritable(e: OSError, where: str) -> PatchSetRefused:  # an unwritable path stops start-up, naming it
        return PatchSetRefused(f"galaxy-mcp-analysis refuses to start Galaxy: the audit trail cannot be written "
                               f"({where}): {e.strerror}")

    try:
        build = audit_trail_builder(settings, tools.TOOL_FACTS)
    except OSError as e:
        raise unwritable(e, f"GALAXY_MCP_ANALYSIS_AUDIT_LOG={settings.audit_log}") from None

    def add_audit_trail(mcp, gx_app):
        try:
            trail = build(gx_app)
        except OSError as e:
            raise unwritable(e, f"galaxy.yml {AUDIT_LOG_OPTION}: {audit_target(settings, gx_app)}") from None
        if trail is not None:
            place(mcp, trail)

    add_server_customizer(add_audit_trail)
