"""Agent context cost: bytes of the tools/list answer an MCP client hands its model.

Every server is measured live and the same way: the ``tools`` array of tools/list as JSON.
"""

import json


def tools_json(tools) -> list[dict]:
    return [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools]


def measure(label: str, tools) -> dict:
    tools = tools_json(tools)
    results = {
        "tools": len(tools),
        "tools_list_bytes": len(json.dumps(tools).encode()),
        "description_bytes": sum(len(tool.get("description", "").encode()) for tool in tools),
        "annotated_tools": sum(1 for tool in tools if tool.get("annotations")),
    }
    print(f"  {label}: {results['tools']} tools, {results['tools_list_bytes']:,} bytes of tools/list JSON "
          f"({results['description_bytes']:,} of descriptions; {results['annotated_tools']} with annotations)")
    return results


def run(mcp, stock_tool_names: frozenset[str]) -> dict:
    """This patch set's tools/list, and the part of it that is Galaxy's stock tools as enriched here."""
    tools = mcp.list_tools()
    results = measure("this patch set", tools)
    stock = [tool for tool in tools_json(tools) if tool["name"] in stock_tool_names]
    results["stock_tools_enriched_bytes"] = len(json.dumps(stock).encode())
    print(f"    of which Galaxy's {len(stock)} stock tools, as enriched here: "
          f"{results['stock_tools_enriched_bytes']:,} bytes")
    return results
