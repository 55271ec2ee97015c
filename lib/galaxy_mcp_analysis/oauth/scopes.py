"""What an OAuth token's scopes reach: ``galaxy:read`` the tools annotated read-only, ``galaxy:write`` all.

A FastMCP middleware on Galaxy's MCP server: a call outside the token's scope is ``[FORBIDDEN]``
naming the scope it needs (before the tool runs), and ``tools/list`` shows a read-only token
only what it may call. API-key calls pass untouched; the user's own rights and the admin's
policy still apply after this (a token never grants more than either).
"""

from fastmcp.server.middleware import Middleware

from galaxy_mcp_analysis.core import oauth as rules
from galaxy_mcp_analysis.core.errors import (
    AnalysisError,
    ErrorCode,
)
from galaxy_mcp_analysis.oauth.caller import current_caller


def _read_only(tool) -> bool:
    annotations = getattr(tool, "annotations", None)
    return bool(annotations and annotations.readOnlyHint)


class TokenScopes(Middleware):
    async def on_call_tool(self, context, call_next):
        caller = current_caller()
        if caller is not None:
            tool = await context.fastmcp_context.fastmcp.get_tool(context.message.name)
            read_only = tool is not None and _read_only(tool)
            if not rules.allows(caller.scopes, read_only):
                needed = rules.needed_scope(read_only)
                raise AnalysisError(
                    ErrorCode.FORBIDDEN,
                    f"{context.message.name} needs the scope {needed}; this sign-in granted {' '.join(caller.scopes)}.",
                    f"Sign in again from the MCP client asking for scope {needed}, or use read-only tools.",
                )
        return await call_next(context)

    async def on_list_tools(self, context, call_next):
        tools = await call_next(context)
        caller = current_caller()
        if caller is None:
            return tools
        return [tool for tool in tools if rules.allows(caller.scopes, _read_only(tool))]
