"""The server's own time for one workflow invocation: ``invoke_workflow`` through /api/mcp against Galaxy's
``POST /api/workflows/{id}/invocations``, measured inside the bench's profiled server (nothing of it is in
the product), so a shared machine's load on the client side drops out.

    .venv/bin/python bench/bench_invoke_profile.py WORKDIR [PAIRS]

The workflow and inputs of ``make bench --only workflows`` (one tabular input, one sort1 step); the sides
alternate which goes first, and each invocation's jobs finish (untimed) before the next call. Prints, per
side, the medians of the server's total and its parts and SQL statements, and the median of the paired
differences of the totals. Run it on another checkout's code with ``PYTHONPATH=<its lib>``; with
``BENCH_PROFILE_DETAIL=1`` it also prints the SQL statements of the last MCP call with the line that ran each.
"""

import os
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


def main(workdir: Path, pairs: int) -> None:
    workdir.mkdir(parents=True, exist_ok=True)
    with LaunchedGalaxy(workdir / "data", server=SERVER) as galaxy:
        key, url = galaxy.api_key, galaxy.galaxy_url
        history = rest(url, "/api/histories", key, {"name": "bench-invoke"})["id"]
        table = fetch(galaxy, key, history, {"src": "pasted", "paste_content": "b\t2\na\t1\n", "ext": "tabular"})["id"]
        workflow = rest(url, "/api/workflows", key, {"workflow": chained(1), "fill_defaults": True})["id"]
        aio.run(measure, galaxy, workflow, history, table, pairs)


async def measure(galaxy, workflow: str, history: str, table: str, pairs: int) -> None:
    key, url = galaxy.api_key, galaxy.galaxy_url
    dataset = {"src": "hda", "id": table}
    async with aio.clients(url, galaxy.mcp_url, key) as c:
        async def via_mcp():
            return await c.call_ok("invoke_workflow", workflow_id=workflow, history_id=history,
                                   inputs={"table": dataset})

        async def via_rest():
            response = await c.http.post(f"{url}/api/workflows/{workflow}/invocations",
                                         json={"history_id": history, "inputs": {"0": dataset},
                                               "inputs_by": "step_index"})
            response.raise_for_status()
            return response.json()

        sides = (("mcp", via_mcp), ("rest", via_rest))
        records: dict[str, list[dict]] = {"mcp": [], "rest": []}
        await c.get("/bench-profile/on")
        for rep in range(pairs + 2):  # the first two pairs warm both paths
            for name, call in sides if rep % 2 == 0 else sides[::-1]:
                answer = await call()
                record = await c.get("/bench-profile/last")
                wait_for_invocation(galaxy, key, answer["id"])
                if rep >= 2:
                    records[name].append(record)
        await c.get("/bench-profile/off")
    print(f"server-side medians of {pairs} pairs (ms; SQL statements):")
    for name, rows in records.items():
        parts = "  ".join(f"{part} {1000 * statistics.median(r[part] for r in rows):6.2f}" for part in PARTS)
        print(f"  {name:4} total {1000 * statistics.median(r['total'] for r in rows):6.2f}  {parts}  "
              f"SQL {statistics.median(r['statements'] for r in rows):.0f}")
    differences = [1000 * (m["total"] - r["total"]) for m, r in zip(records["mcp"], records["rest"])]
    ratios = [m["total"] / r["total"] for m, r in zip(records["mcp"], records["rest"])]
    print(f"  MCP - REST, median of paired differences: {statistics.median(differences):.2f} ms "
          f"[p25 {statistics.quantiles(differences, n=4)[0]:.2f}, p75 {statistics.quantiles(differences, n=4)[2]:.2f}]; "
          f"median ratio {statistics.median(ratios):.3f}")
    if os.environ.get("BENCH_PROFILE_DETAIL") == "1":
        print("SQL of the last MCP call:")
        for line in records["mcp"][-1].get("statement_log", []):
            print("   ", line)


if __name__ == "__main__":
    began = time.monotonic()
    main(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 20)
    print(f"({time.monotonic() - began:.0f} s)")
