"""The API key from the HTTP request (``x-api-key`` or ``Authorization: Bearer``), for every tool.

``HeaderApiKey`` (middleware) fills a tool's ``api_key`` argument from the request's
headers, so the key need not sit in the model's context; ``OptionalApiKey`` (transform)
advertises the argument as optional. Galaxy's 37 tools and ours alike.
"""

from fastmcp.server.middleware import Middleware
from fastmcp.tools.base import Tool

from galaxy_mcp_analysis.core.errors import (
    AnalysisError,
    ErrorCode,
)
from galaxy_mcp_analysis.mcp.surface import ToolRewrite

API_KEY_ARGUMENT = "api_key"
API_KEY_DESCRIPTION = "Galaxy API key; omit if the MCP client sends the x-api-key header."


def api_key_from_request() -> str | None:
    """The key an MCP client sends with every HTTP request, if any (x-api-key or a Bearer token)."""
    from fastmcp.server.dependencies import get_http_request

    try:
        headers = get_http_request().headers
    except RuntimeError:  # no HTTP request (in-process calls)
        return None
    header_key = headers.get("x-api-key", "").strip() or None
    scheme, _, token = headers.get("authorization", "").strip().partition(" ")
    bearer_key = token.strip() if scheme.lower() == "bearer" and token.strip() else None
    if header_key and bearer_key and header_key != bearer_key:
        raise AnalysisError(
            ErrorCode.AUTHENTICATION_ERROR,
            "The request carries two different API keys (x-api-key and Authorization: Bearer).",
            "Configure one of the two headers in the MCP client.",
        )
    return header_key or bearer_key


class HeaderApiKey(Middleware):
    """Fill a tool's ``api_key`` argument from the request's headers; refuse a mismatch."""

    async def on_call_tool(self, context, call_next):
        message = context.message
        arguments = dict(message.arguments or {})
        given = arguments.get(API_KEY_ARGUMENT) or None
        from_request = api_key_from_request()
        if from_request and given and given != from_request:
            raise AnalysisError(
                ErrorCode.AUTHENTICATION_ERROR,
                "The api_key argument differs from the API key sent in the HTTP request header.",
                "Drop the api_key argument (the header already identifies you) or send the same key in both.",
            )
        if from_request and not given:
            arguments[API_KEY_ARGUMENT] = from_request
            context = context.copy(message=message.model_copy(update={"arguments": arguments}))
        elif not given and await self._takes_api_key(context):
            raise AnalysisError(
                ErrorCode.AUTHENTICATION_ERROR,
                "No API key: the call has no api_key argument and the request no x-api-key header.",
                "Configure the MCP client to send the header x-api-key: <key> (or Authorization: Bearer <key>), "
                "or pass api_key. Keys are under User -> Preferences -> Manage API Key in Galaxy.",
            )
        return await call_next(context)

    @staticmethod
    async def _takes_api_key(context) -> bool:
        tool = await context.fastmcp_context.fastmcp.get_tool(context.message.name)
        return tool is not None and API_KEY_ARGUMENT in tool.parameters.get("properties", {})


class OptionalApiKey(ToolRewrite):
    """Advertise ``api_key`` as optional (HeaderApiKey fills it in before the tool validates)."""

    def rewrite(self, tool: Tool) -> Tool:
        properties = tool.parameters.get("properties", {})
        if API_KEY_ARGUMENT not in properties:
            return tool
        parameters = dict(tool.parameters)
        parameters["properties"] = {
            **properties,
            API_KEY_ARGUMENT: {"type": "string", "description": API_KEY_DESCRIPTION},
        }
        required = [name for name in parameters.get("required", []) if name != API_KEY_ARGUMENT]
        if required:
            parameters["required"] = required
        else:
            parameters.pop("required", None)
        return tool.model_copy(update={"parameters": parameters})
