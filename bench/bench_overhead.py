"""Per-call overhead: a small read tool (get_dataset_details) via MCP vs the REST call it wraps.

Measured as an agent calls: the official async MCP client on one warm session, REST on one
kept-alive connection, both on one event loop, the key in the x-api-key header. Beside them,
the client's own round-trip cost: an MCP ``ping`` (answered by the MCP layer, no tool) and a
REST call that does no work (``GET /api/version``). Repeated runs give the spread.
"""

import aio
from common import fetch
from galaxy_mcp_analysis.testing import rest


def run(galaxy, mcp, calls: int, runs: int = 3, label: str = "") -> dict:
    key = galaxy.api_key
    history = rest(galaxy.galaxy_url, "/api/histories", key, {"name": "bench-overhead"})["id"]
    dataset_id = fetch(galaxy, key, history, {"src": "pasted", "paste_content": "a\t1\nb\t2\n", "ext": "tabular"})["id"]
    return aio.run(measure, galaxy, dataset_id, calls, runs, label)


async def measure(galaxy, dataset_id: str, calls: int, runs: int, label: str) -> dict:
    async with aio.clients(galaxy.galaxy_url, galaxy.mcp_url, galaxy.api_key) as c:

        async def mcp_call():
            await c.call_ok("get_dataset_details", dataset_id=dataset_id)

        async def rest_call():
            await c.get(f"/api/datasets/{dataset_id}")

        async def mcp_ping():
            await c.mcp.send_ping()

        async def rest_version():
            await c.get("/api/version")

        figures = await aio.repeated(
            {"mcp": mcp_call, "rest": rest_call, "ping": mcp_ping, "version": rest_version}, calls, runs)
    for stat in ("p50", "p95"):
        figures[f"{stat}_ratio"] = aio.ratio_spread(figures, "mcp", "rest", stat)
        figures[f"round_trip_{stat}_ratio"] = aio.ratio_spread(figures, "ping", "version", stat)
        print(f"  {label}get_dataset_details {stat}, {runs} runs x {calls} calls (median [min-max] of runs): "
              f"MCP {aio.show(figures[f'mcp_{stat}_ms'])} vs REST GET /api/datasets/{{id}} "
              f"{aio.show(figures[f'rest_{stat}_ms'])} -> ratio {aio.show_ratio(figures[f'{stat}_ratio'])}")
        print(f"  {label}  round trip alone, {stat}: MCP ping {aio.show(figures[f'ping_{stat}_ms'])} vs REST "
              f"GET /api/version {aio.show(figures[f'version_{stat}_ms'])} "
              f"-> ratio {aio.show_ratio(figures[f'round_trip_{stat}_ratio'])}")
    return figures
