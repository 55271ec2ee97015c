"""How Galaxy's stock tools look at /api/mcp: one FastMCP transform, and the base of transforms.

``ToolSurface`` gives Galaxy's stock tools their annotations and corrected descriptions
(tables in galaxy_mcp_analysis.tools), and drops the output schema where it would only say
"an object" (every tool returns a JSON object; 64 bytes per tool saved). Transforms change
what ``tools/list`` advertises and what ``get_tool`` resolves; the tool functions and their
argument validation stay Galaxy's (or ours). The other pieces every tool shares are one
module per concern beside this one: ``errors`` (coded errors), ``api_key`` (the key from
the request's headers), ``session`` (one database session per call).
"""

import copy
from collections.abc import Sequence
from typing import Any

from fastmcp.server.transforms import Transform
from fastmcp.tools.base import Tool
from mcp.types import ToolAnnotations


class ToolRewrite(Transform):
    """A transform that rewrites each tool it passes with ``rewrite(tool)``."""

    def rewrite(self, tool: Tool) -> Tool:
        raise NotImplementedError

    async def list_tools(self, tools: Sequence[Tool]) -> Sequence[Tool]:
        return [self.rewrite(tool) for tool in tools]

    async def get_tool(self, name, call_next, *, version=None):
        tool = await call_next(name, version=version)
        return None if tool is None else self.rewrite(tool)


#: The output schema FastMCP derives from ``-> dict[str, Any]``: it tells a client nothing.
_ANY_OBJECT = {"type": "object", "additionalProperties": True}


class ToolSurface(ToolRewrite):
    """Annotations and (where they mislead) descriptions of Galaxy's stock tools; no empty output schemas.

    ``descriptions`` maps a tool's name to its description and ``tool.parameter`` to that parameter's.
    """

    def __init__(self, annotations: dict[str, ToolAnnotations], descriptions: dict[str, str]):
        self.annotations = annotations
        self.descriptions = {name: text for name, text in descriptions.items() if "." not in name}
        self.parameters: dict[str, dict[str, str]] = {}
        for key, text in descriptions.items():
            if "." in key:
                tool, parameter = key.split(".", 1)
                self.parameters.setdefault(tool, {})[parameter] = text

    def __repr__(self) -> str:
        return f"ToolSurface({len(self.annotations)} annotated, {len(self.descriptions)} described)"

    def rewrite(self, tool: Tool) -> Tool:
        update: dict[str, Any] = {}
        if tool.name in self.annotations:
            annotations = self.annotations[tool.name]
            update.update(annotations=annotations, title=annotations.title)
        if tool.name in self.descriptions:
            update["description"] = self.descriptions[tool.name]
        if tool.name in self.parameters:
            schema = copy.deepcopy(tool.parameters)
            for parameter, text in self.parameters[tool.name].items():
                schema["properties"][parameter]["description"] = text
            update["parameters"] = schema
        if tool.output_schema == _ANY_OBJECT:
            # Without a schema FastMCP still returns a dict result as structured content.
            update["output_schema"] = None
        return tool.model_copy(update=update) if update else tool
