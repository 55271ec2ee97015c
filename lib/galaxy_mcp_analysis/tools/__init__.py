"""The MCP tools the patch set adds, one module per capability: declarations only.

Each module declares its tools with ``mcp.declaration.analysis_tool`` and may replace
misleading descriptions of Galaxy's stock tools in a ``STOCK_DESCRIPTIONS`` dict.
Descriptions are product surface: what the tool does, what it returns, limits,
one example, errors, and the next tools to call. Agents pay for every token.
"""

import inspect

from galaxy_mcp_analysis.core.tool_facts import facts_table
from galaxy_mcp_analysis.mcp.declaration import TOOL_SPECS
from galaxy_mcp_analysis.tools import (
    jobs,
    making_inputs,
    managing,
    pages,
    reading,
    stock,
    tool_information,
    tool_inputs,
    workflows,
)

CAPABILITIES = (
    reading,
    pages,
    making_inputs,
    jobs,
    tool_inputs,
    tool_information,
    managing,
    workflows,
)

#: The annotations of Galaxy's 37 stock tools, from their rows of the stock table (ours are declared with their code).
STOCK_ANNOTATIONS = stock.STOCK_ANNOTATIONS

#: The facts of every served MCP tool (core.tool_facts), by name: the stock table's rows and ours, declared
#: with ``analysis_tool``. The policy and the audit trail read only this (activation hands it over).
TOOL_FACTS = facts_table([*stock.STOCK_FACTS.values(), *(spec.facts for spec in TOOL_SPECS)])

#: How the text block of large stock results is shaped (mcp.result_text), by tool name.
STOCK_TEXT = stock.STOCK_TEXT

#: Descriptions replacing Galaxy's stock ones, applied by mcp.surface.ToolSurface: the
#: tools a capability changes describe themselves there; the rest are in tools/stock.py.
STOCK_DESCRIPTIONS = {
    name: inspect.cleandoc(text)
    for module in (stock, *CAPABILITIES)
    for name, text in getattr(module, "STOCK_DESCRIPTIONS", {}).items()
}
