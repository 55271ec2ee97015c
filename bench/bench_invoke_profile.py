"""The server's own time for one workflow invocation: ``invoke_workflow`` through /api/mcp against Galaxy's
``POST /api/workflows/{id}/invocations``, measured inside the bench's profiled server (nothing of it is in
the product), so a shared machine's load on the client side drops out.

    .venv/bin/python bench/bench_invoke_profile.py WORKDIR [PAIRS]

The workflow and inputs of ``make bench --only workflows`` (one tabular input, one sort1 step); the sides
alternate which goes first, and each invocation's jobs finish (untimed) before the next call. Prints, per
side, the medians of the server's total and its parts and SQL statements, and the median of the paired
differences of the totals. Run it on another checkout's code with ``PYTHONPATH=<its lib>``; with
``BENCH_PROFILE_DETAIL=1`` it also prints the SQL statements of the last MCP call with the line that ran each.

The bench's own clock (``make bench``) also holds what happens outside the server's request: the client's
work (the MCP SDK's request and result models, JSON, its streams; httpx) and the loopback HTTP. Each call's
wall time in this process is recorded too, and ``wall - total`` per side is printed: what the bench adds on
top of the server's clock. ``BENCH_CLIENT_PROFILE=1`` also runs cProfile in this process around each side's
calls (not their waits) and prints each side's largest cumulative entries (timing then not comparable).
``BENCH_CLIENTS=sync`` uses ``make bench``'s own clients instead of the async ones: the synchronous
``McpClient`` (the SDK on an event loop in a thread of its own) and ``rest()`` (urllib, a connection per call).
"""

import cProfile
import io
import json
import os
import pstats
import statistics
import sys
import time
from pathlib import Path

import aio
from bench_workflows import chained
from common import (
    fetch,
    wait_for_invocation,
)
from profiled_server import PARTS

from galaxy_mcp_analysis.testing import rest
from galaxy_mcp_analysis.testing.launcher import LaunchedGalaxy

SERVER = [str(Path(__file__).resolve().parent / "profiled_server.py")]


#: BENCH_CLIENTS=sync: make bench's synchronous MCP client, opened in ``main``.
SYNC: list = []


def main(workdir: Path, pairs: int) -> None:
    workdir.mkdir(parents=True, exist_ok=True)
    with LaunchedGalaxy(workdir / "data", server=SERVER) as galaxy:
        key, url = galaxy.api_key, galaxy.galaxy_url
        history = rest(url, "/api/histories", key, {"name": "bench-invoke"})["id"]
        table = fetch(galaxy, key, history, {"src": "pasted", "paste_content": "b\t2\na\t1\n", "ext": "tabular"})["id"]
        workflow = rest(url, "/api/workflows", key, {"workflow": chained(1), "fill_defaults": True})["id"]
        if os.environ.get("BENCH_CLIENTS") == "sync":
            from galaxy_mcp_analysis.testing import McpClient

            with McpClient(galaxy.mcp_url) as mcp:
                SYNC.append(mcp)
                aio.run(measure, galaxy, workflow, history, table, pairs)
        else:
            aio.run(measure, galaxy, workflow, history, table, pairs)


async def measure(galaxy, workflow: str, history: str, table: str, pairs: int) -> None:
    key, url = galaxy.api_key, galaxy.galaxy_url
    dataset = {"src": "hda", "id": table}
    async with aio.clients(url, galaxy.mcp_url, key) as c:
        async def via_mcp():
            if SYNC:
                return SYNC[0].call_ok("invoke_workflow", workflow_id=workflow, history_id=history,
                                       inputs={"table": dataset}, api_key=key)
            return await c.call_ok("invoke_workflow", workflow_id=workflow, history_id=history,
                                   inputs={"table": dataset})

        async def via_rest():
            payload = {"history_id": history, "inputs": {"0": dataset}, "inputs_by": "step_index"}
            if SYNC:
                return rest(url, f"/api/workflows/{workflow}/invocations", key, payload)
            response = await c.http.post(f"{url}/api/workflows/{workflow}/invocations", json=payload)
            response.raise_for_status()
            return response.json()

        sides = (("mcp", via_mcp), ("rest", via_rest))
        records: dict[str, list[dict]] = {"mcp": [], "rest": []}
        profiles = {"mcp": cProfile.Profile(), "rest": cProfile.Profile()} if CLIENT_PROFILE else {}
        await c.get("/bench-profile/on")
        for rep in range(pairs + 2):  # the first two pairs warm both paths
            for name, call in sides if rep % 2 == 0 else sides[::-1]:
                if profiles:
                    profiles[name].enable()
                start = time.perf_counter()
                answer = await call()
                wall = time.perf_counter() - start
                if profiles:
                    profiles[name].disable()
                record = await c.get("/bench-profile/last") | {"wall": wall}
                wait_for_invocation(galaxy, key, answer["id"])
                if rep >= 2:
                    records[name].append(record)
        if os.environ.get("BENCH_PROFILE_DETAIL") == "1":  # the server's cProfile of MCP calls alone
            await c.http.get(f"{url}/bench-profile/cprofile")
            invoked = [(await via_mcp())["id"] for _ in range(5)]  # their jobs waited for after: no GET profiled
            print("server-side cProfile of 5 MCP calls:", (await c.http.get(f"{url}/bench-profile/cprofile")).text)
            for invocation in invoked:
                wait_for_invocation(galaxy, key, invocation)
        await c.get("/bench-profile/off")
        raw = await c.mcp.call_tool("invoke_workflow", {"workflow_id": workflow, "history_id": history,
                                                       "inputs": {"table": dataset}, "api_key": key})
        wait_for_invocation(galaxy, key, raw.structured_content["id"])
        rest_answer = await via_rest()
        wait_for_invocation(galaxy, key, rest_answer["id"])
    report(records)
    print(f"  result sizes: MCP CallToolResult {len(raw.model_dump_json(by_alias=True, exclude_none=True))} B "
          f"(structuredContent {len(json.dumps(raw.structured_content))} B, text "
          f"{sum(len(getattr(b, 'text', '')) for b in raw.content)} B); REST body {len(json.dumps(rest_answer))} B")
    for name, profile in profiles.items():
        text = io.StringIO()
        pstats.Stats(profile, stream=text).sort_stats("cumulative").print_stats(30)
        print(f"client-side cProfile, {name} calls:", text.getvalue()[-6000:])


CLIENT_PROFILE = os.environ.get("BENCH_CLIENT_PROFILE") == "1"


def report(records: dict[str, list[dict]]) -> None:
    print(f"server-side medians of {len(records['mcp'])} pairs (ms; SQL statements):")
    for name, rows in records.items():
        parts = "  ".join(f"{part} {1000 * statistics.median(r[part] for r in rows):6.2f}" for part in PARTS)
        print(f"  {name:4} total {1000 * statistics.median(r['total'] for r in rows):6.2f}  {parts}  "
              f"SQL {statistics.median(r['statements'] for r in rows):.0f}")
    pairs = list(zip(records["mcp"], records["rest"]))
    paired = "  ".join(f"{part} {statistics.median(1000 * (m[part] - r[part]) for m, r in pairs):+6.2f}"
                       for part in PARTS)
    print(f"  MCP - REST per part, median of paired differences (ms): {paired}")
    for name, rows in records.items():
        outside = [1000 * (r["wall"] - r["total"]) for r in rows]
        print(f"  {name:4} wall {1000 * statistics.median(r['wall'] for r in rows):6.2f}  outside the server's request "
              f"(client, loopback HTTP) {statistics.median(outside):6.2f}")
    outside = [1000 * ((m["wall"] - m["total"]) - (r["wall"] - r["total"])) for m, r in pairs]
    walls = [1000 * (m["wall"] - r["wall"]) for m, r in pairs]
    print(f"  MCP - REST outside the server, median of paired differences: {statistics.median(outside):.2f} ms "
          f"[p25 {statistics.quantiles(outside, n=4)[0]:.2f}, p75 {statistics.quantiles(outside, n=4)[2]:.2f}]; "
          f"wall: {statistics.median(walls):.2f} ms, median wall ratio "
          f"{statistics.median(m['wall'] / r['wall'] for m, r in pairs):.3f}")
    differences = [1000 * (m["total"] - r["total"]) for m, r in pairs]
    ratios = [m["total"] / r["total"] for m, r in pairs]
    quartiles = statistics.quantiles(differences, n=4)
    print(f"  MCP - REST, median of paired differences: {statistics.median(differences):.2f} ms "
          f"[p25 {quartiles[0]:.2f}, p75 {quartiles[2]:.2f}]; "
          f"median ratio {statistics.median(ratios):.3f}")
    if os.environ.get("BENCH_PROFILE_DETAIL") == "1":
        print("SQL of the last MCP call:")
        for line in records["mcp"][-1].get("statement_log", []):
            print("   ", line)


if __name__ == "__main__":
    began = time.monotonic()
    main(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 20)
    print(f"({time.monotonic() - began:.0f} s)")
