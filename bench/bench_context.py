"""Agent context cost: bytes of the tools/list answer an MCP client hands its model."""

import json


def run(mcp, stock_tool_names: frozenset[str]) -> dict:
    tools = [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in mcp.list_tools()]
    total = len(json.dumps(tools).encode())
    stock = [tool for tool in tools if tool["name"] in stock_tool_names]
    results = {
        "tools": len(tools),
        "tools_list_bytes": total,
        "description_bytes": sum(len(tool.get("description", "").encode()) for tool in tools),
        "stock_tools_bytes": len(json.dumps(stock).encode()),
    }
    print(f"  tools/list: {results['tools']} tools, {total:,} bytes of JSON "
          f"({results['description_bytes']:,} of descriptions); Galaxy's {len(stock)} stock tools as enriched here: "
          f"{results['stock_tools_bytes']:,} bytes (stock Galaxy 26.1.2: 31,283 bytes for 37 tools)")
    return results
