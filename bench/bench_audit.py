"""The audit trail's cost per call: a small read through /api/mcp without the trail, and with it.

The bench's Galaxy runs without ``GALAXY_MCP_ANALYSIS_AUDIT_LOG`` (the default). Interleaved on
one event loop: (1) ``get_dataset_details`` through /api/mcp, as bench_overhead calls it; (2) the
trail's middleware (``mcp.audit.AuditTrail``, the same object Galaxy would run outermost) around a
call that returns a run_tool-shaped result at once, writing every line to a real file under its
lock, the request's user already looked up (``mcp.caller``: once per request, by the layer that
needs it first, shared with the tool); (3) that bare
call without the middleware. With the trail a call costs (1) + ((2) - (3)); the ratio is that over
(1). A start-up with the variable set would add the same middleware; nothing else changes.
"""

from pathlib import Path

import aio
from common import fetch
from fastmcp.server.middleware import MiddlewareContext
from fastmcp.tools.base import ToolResult
from mcp.types import CallToolRequestParams

from galaxy_mcp_analysis import tools
from galaxy_mcp_analysis.core.audit_file import AuditFile
from galaxy_mcp_analysis.mcp import caller as callers
from galaxy_mcp_analysis.mcp.audit import AuditTrail
from galaxy_mcp_analysis.testing import rest

RESULT = {"jobs": [{"id": f"job{i}", "state": "new"} for i in range(2)],
          "outputs": [{"id": f"out{i}", "name": f"output {i}"} for i in range(3)],
          "implicit_collections": []}


def run(galaxy, mcp, workdir: Path, calls: int, runs: int = 3) -> dict:
    key = galaxy.api_key
    history = rest(galaxy.galaxy_url, "/api/histories", key, {"name": "bench-audit"})["id"]
    dataset_id = fetch(galaxy, key, history, {"src": "pasted", "paste_content": "a\t1\n", "ext": "tabular"})["id"]
    return aio.run(measure, galaxy, dataset_id, workdir / "bench-audit.jsonl", calls, runs)


async def measure(galaxy, dataset_id: str, log_path: Path, calls: int, runs: int) -> dict:
    trail = AuditTrail(gx_app=None, sink=AuditFile(str(log_path)), facts=tools.TOOL_FACTS)
    arguments = {"history_id": "h" * 16, "tool_id": "Cut1", "inputs": {"input": {"src": "hda", "id": "d" * 16},
                                                                        "columnList": "c1,c2"}, "api_key": "k" * 32}
    context = MiddlewareContext(message=CallToolRequestParams(name="run_tool", arguments=arguments))
    known = callers.RequestCaller(None, arguments["api_key"])  # the user the call's own lookup found
    known._resolved = callers._Resolved(None, "bench-user")
    callers._CURRENT.set(known)

    async def bare(_context=None):
        return ToolResult(structured_content=RESULT)

    async with aio.clients(galaxy.galaxy_url, galaxy.mcp_url, galaxy.api_key) as c:

        async def mcp_call():
            await c.call_ok("get_dataset_details", dataset_id=dataset_id)

        async def audited():
            await trail.on_call_tool(context, bare)

        figures = await aio.repeated({"mcp": mcp_call, "audited": audited, "bare": bare}, calls, runs)
    lines = sum(1 for _ in open(log_path))
    assert lines >= calls * runs, lines  # every audited call left its line
    for stat in ("p50", "p95"):
        added = figures[f"audited_{stat}_ms"]["median"] - figures[f"bare_{stat}_ms"]["median"]
        base = figures[f"mcp_{stat}_ms"]["median"]
        figures[f"added_{stat}_ms"] = round(added, 4)
        figures[f"{stat}_ratio"] = round((base + added) / base, 4)
        print(f"  audit trail, {stat}, {runs} runs x {calls} calls: get_dataset_details via MCP "
              f"{base:.2f} ms without the trail, {base + added:.2f} ms with it (+{1000 * added:.0f} us: "
              f"record, lock, one append) -> ratio {figures[f'{stat}_ratio']:.3f}")
    figures["lines_written"] = lines
    return figures
