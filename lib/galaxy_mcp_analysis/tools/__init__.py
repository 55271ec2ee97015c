"""The MCP tools the patch set adds, one module per capability: declarations only.

Each module declares its tools with ``mcp_tools.analysis_tool`` and may replace
misleading descriptions of Galaxy's stock tools in a ``STOCK_DESCRIPTIONS`` dict.
Descriptions are product surface: what the tool does, what it returns, limits,
one example, errors, and the next tools to call. Agents pay for every token.
"""

from galaxy_mcp_analysis.tools import (
    jobs,
    making_inputs,
    pages,
    reading,
)

CAPABILITIES = (reading, pages, making_inputs, jobs)

#: Stock Galaxy tools whose descriptions mislead agents; replaced through FastMCP transforms.
STOCK_DESCRIPTIONS = {
    name: text for module in CAPABILITIES for name, text in getattr(module, "STOCK_DESCRIPTIONS", {}).items()
}
