"""How often one MCP call looks its caller up, with a policy file and the audit trail on.

    .venv/bin/python bench/bench_caller.py WORKDIR [CALLS]

Before ``mcp/caller.py`` the policy, the audit trail and our tools' operations manager each turned
the key into the Galaxy user (``UserManager.by_api_key``), the first two in database sessions of
their own. The bench's profiled server (bench/profiled_server.py: nothing of it is in the product)
counts, per request, the lookups (``auth_calls``), the time in them and every SQL statement; this
prints their medians for a call of Galaxy's, two of ours and a run_tool under a job limit (the
policy's dry run, then the run). Run it on another checkout's code with ``PYTHONPATH=<its lib>``.
"""

import statistics
import sys
import time
from pathlib import Path

import aio
from common import (
    fetch,
    wait_for_dataset,
)

from galaxy_mcp_analysis.testing import rest
from galaxy_mcp_analysis.testing.launcher import LaunchedGalaxy

SERVER = [str(Path(__file__).resolve().parent / "profiled_server.py")]
POLICY = "rules:\n  - name: probe\n    who: everyone\n    deny_mcp_tools: [purge]\n    max_jobs_per_call: 50\n"


def main(workdir: Path, calls: int) -> None:
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "policy.yml").write_text(POLICY)
    env = {"GALAXY_MCP_ANALYSIS_POLICY_FILE": str(workdir / "policy.yml"),
           "GALAXY_MCP_ANALYSIS_AUDIT_LOG": str(workdir / "audit.jsonl")}
    with LaunchedGalaxy(workdir / "data", server=SERVER, env=env) as galaxy:
        key = galaxy.api_key
        history = rest(galaxy.galaxy_url, "/api/histories", key, {"name": "bench-caller"})["id"]
        dataset = fetch(galaxy, key, history, {"src": "pasted", "paste_content": "a\t1\n", "ext": "tabular"},
                        wait=False)["id"]
        wait_for_dataset(galaxy, key, dataset, timeout=900)  # a loaded machine's upload job can take minutes
        aio.run(measure, galaxy, history, dataset, calls)


async def measure(galaxy, history: str, dataset: str, calls: int) -> None:
    cut = {"input": {"src": "hda", "id": dataset}, "columnList": "c1"}
    async with aio.clients(galaxy.galaxy_url, galaxy.mcp_url, galaxy.api_key) as c:
        cases = {
            "get_dataset_details (Galaxy's)": lambda: c.call_ok("get_dataset_details", dataset_id=dataset),
            "peek_dataset_content (ours)": lambda: c.call_ok("peek_dataset_content", dataset_id=dataset),
            "check_tool_inputs (ours)": lambda: c.call_ok("check_tool_inputs", history_id=history, tool_id="Cut1",
                                                          inputs=cut),
            "run_tool (job limit: dry run, run)": lambda: c.call_ok("run_tool", history_id=history, tool_id="Cut1",
                                                                    inputs=cut),
        }
        await c.get("/bench-profile/on")
        for call in cases.values():  # warm every path
            await call()
        records: dict[str, list[dict]] = {name: [] for name in cases}
        for _ in range(calls):
            for name, call in cases.items():
                start = time.perf_counter()
                await call()
                record = await c.get("/bench-profile/last")
                record["client"] = time.perf_counter() - start
                records[name].append(record)
        await c.get("/bench-profile/off")
    print(f"medians of {calls} calls each: user lookups, ms in them, SQL statements, server ms, client ms")
    for name, rows in records.items():
        median = lambda key, scale=1: scale * statistics.median(row.get(key, 0) for row in rows)  # noqa: E731
        print(f"  {name:38} lookups {median('auth_calls'):>3.0f}  auth {median('auth_wall', 1000):6.2f} ms  "
              f"SQL {median('statements'):>4.0f}  server {median('total', 1000):7.2f} ms  "
              f"client {median('client', 1000):7.2f} ms")


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 20)
