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
    """``facts``: the tools' facts table (tools.TOOL_FACTS), whose ``read_only`` is the annotation served; a
    tool without a row is asked of the server (FastMCP's ``get_tool``, which runs the transforms again; the
    table spares a token's every call that)."""

    def __init__(self, facts: dict | None = None):
        self.facts = facts or {}

    async def _read_only(self, context) -> bool:
        facts = self.facts.get(context.message.name)
        if facts is not None:
            return facts.read_only
        tool = await context.fastmcp_context.fastmcp.get_tool(context.message.name)
        return tool is not None and _read_only(tool)

    async def on_call_tool(self, context, call_next):
        caller = current_caller()
        if caller is not None:
            read_only = await self._read_only(context)
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
