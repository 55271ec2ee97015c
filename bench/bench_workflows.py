"""Workflows: reading a workflow's inputs, what the invocation preflight adds, extraction vs jobs.

- get_workflow_input_schema p50 for a 2-step and a 10-step workflow (one input, then 1 or 9
  chained sort1 steps).
- invoke_workflow through MCP (preflight, then Galaxy's invocation) against Galaxy's REST
  invocation (no preflight), interleaved with each side first in turn, each invocation's jobs
  finished (untimed) before the next call; and check_workflow_inputs alone (the preflight's own cost).
- create_workflow_from_history on histories holding N finished tool jobs (cat1, one job each).
"""

import time

import aio
from common import (
    fetch,
    median_seconds,
    timed,
    wait_for_invocation,
)
from galaxy_mcp_analysis.testing import rest


def chained(steps: int) -> dict:
    document = {"class": "GalaxyWorkflow", "inputs": {"table": {"type": "data", "format": "tabular"}}, "steps": {}}
    source = "table"
    for n in range(steps):
        document["steps"][f"sort{n}"] = {
            "tool_id": "sort1",
            "in": {"input": source},
            "state": {"column": "1", "style": "num", "order": "ASC"},
        }
        source = f"sort{n}/out_file1"
    return document


def run(galaxy, mcp, reps: int, job_counts: list[int]) -> dict:
    key, gx = galaxy.api_key, galaxy.galaxy_url
    history = mcp.call_ok("create_history", name="bench-workflows", api_key=key)["id"]
    table = fetch(galaxy, key, history, {"src": "pasted", "paste_content": "b\t2\na\t1\n", "ext": "tabular"})["id"]
    results: dict = {}

    for total in (2, 10):
        workflow = rest(gx, "/api/workflows", key, {"workflow": chained(total - 1), "fill_defaults": True})["id"]
        samples = [
            timed(mcp.call_ok, "get_workflow_input_schema", workflow_id=workflow, api_key=key)[0] for _ in range(reps)
        ]
        results[f"schema_{total}_steps_p50_s"] = median_seconds(samples)
        print(f"  get_workflow_input_schema, {total}-step workflow: p50 {median_seconds(samples) * 1000:.0f} ms")

    workflow = rest(gx, "/api/workflows", key, {"workflow": chained(1), "fill_defaults": True})["id"]
    inputs = {"table": {"src": "hda", "id": table}}
    times, check_times = aio.run(invocation_pairs, galaxy, mcp, workflow, history, inputs, reps)
    # The figure against the target keeps main's clients (sync McpClient, urllib), comparable with earlier runs:
    # in the same series the async REST side read 1-16 ms slower than urllib's, so the async pair flatters MCP.
    for suffix, pair in (("", ("mcp_sync", "rest_sync")), ("_async_clients", ("mcp", "rest")),
                         ("_async_mcp_urllib_rest", ("mcp", "rest_sync"))):
        results[f"invoke_mcp{suffix}_p50_s"] = median_seconds(times[pair[0]])
        results[f"invoke_rest{suffix}_p50_s"] = median_seconds(times[pair[1]])
        results[f"invoke_mcp_over_rest{suffix}"] = (results[f"invoke_mcp{suffix}_p50_s"]
                                                    / results[f"invoke_rest{suffix}_p50_s"])
    results["preflight_p50_s"] = median_seconds(check_times)
    for suffix, clients in (("", "the tests' clients (sync McpClient, urllib)"), ("_async_clients", "async clients"),
                            ("_async_mcp_urllib_rest", "async MCP, urllib REST")):
        print(f"  invoke_workflow, {clients}: MCP with preflight {results[f'invoke_mcp{suffix}_p50_s'] * 1000:.0f} ms"
              f" vs REST {results[f'invoke_rest{suffix}_p50_s'] * 1000:.0f} ms -> ratio "
              f"{results[f'invoke_mcp_over_rest{suffix}']:.2f}" + (" (target <= 1.1)" if not suffix else ""))
    print(f"  the preflight alone (check_workflow_inputs) {results['preflight_p50_s'] * 1000:.0f} ms")
    mcp.call_ok("wait_for_jobs", history_id=history, timeout_seconds=120, api_key=key)
    _extractions(galaxy, mcp, job_counts, results)
    return results


async def invocation_pairs(galaxy, mcp, workflow: str, history: str, inputs: dict, reps: int):
    """Seconds per ``invoke_workflow`` and per REST invocation in one interleaved series, the order rotated, on
    two kinds of client: an agent's (``aio``: the async SDK on one warm session, REST on one kept-alive
    connection; ``mcp``, ``rest``) and the tests' (the synchronous ``McpClient``, an event loop in another
    thread, and urllib, a connection per call; ``mcp_sync``, ``rest_sync``: what this section timed until
    2026-11-27, and still the figure against the target); and per ``check_workflow_inputs`` (the preflight)."""
    key = galaxy.api_key
    payload = {"history_id": history, "inputs": {"0": inputs["table"]}, "inputs_by": "step_index"}
    times: dict[str, list[float]] = {"mcp": [], "rest": [], "mcp_sync": [], "rest_sync": []}
    check_times = []
    async with aio.clients(galaxy.galaxy_url, galaxy.mcp_url, key) as c:
        async def via_rest():
            response = await c.http.post(f"{galaxy.galaxy_url}/api/workflows/{workflow}/invocations", json=payload)
            response.raise_for_status()
            return response.json()

        async def via_mcp_sync():
            return mcp.call_ok("invoke_workflow", workflow_id=workflow, history_id=history, inputs=inputs, api_key=key)

        async def via_rest_sync():
            return rest(galaxy.galaxy_url, f"/api/workflows/{workflow}/invocations", key, payload)

        sides = {"mcp": lambda: c.call_ok("invoke_workflow", workflow_id=workflow, history_id=history, inputs=inputs),
                 "rest": via_rest, "mcp_sync": via_mcp_sync, "rest_sync": via_rest_sync}
        names = list(sides)
        for rep in range(reps):  # interleaved so drift hits every side alike, the order rotated
            for name in names[rep % 4:] + names[:rep % 4]:
                start = time.perf_counter()
                answer = await sides[name]()
                times[name].append(time.perf_counter() - start)
                for invocation in answer if isinstance(answer, list) else [answer]:
                    wait_for_invocation(galaxy, key, invocation["id"])  # untimed: its jobs never run beside a call
            start = time.perf_counter()
            await c.call_ok("check_workflow_inputs", workflow_id=workflow, history_id=history, inputs=inputs)
            check_times.append(time.perf_counter() - start)
    return times, check_times


def _extractions(galaxy, mcp, job_counts: list[int], results: dict) -> None:
    key = galaxy.api_key
    for count in job_counts:
        jobs_history = mcp.call_ok("create_history", name=f"bench-extract-{count}", api_key=key)["id"]
        source = fetch(galaxy, key, jobs_history, {"src": "pasted", "paste_content": "a\n", "ext": "txt"})["id"]
        job_ids = []
        for _ in range(count):
            ran = mcp.call_ok(
                "run_tool",
                history_id=jobs_history,
                tool_id="cat1",
                inputs={"input1": {"src": "hda", "id": source}},
                api_key=key,
            )
            job_ids += [job["id"] for job in ran["jobs"]]
        deadline = time.monotonic() + 1800
        while not mcp.call_ok("wait_for_jobs", job_ids=job_ids, timeout_seconds=110, api_key=key)["all_terminal"]:
            assert time.monotonic() < deadline
        seconds, saved = timed(
            mcp.call_ok, "create_workflow_from_history", history_id=jobs_history, name=f"extract {count}", api_key=key
        )
        results[f"extract_{count}_jobs_s"] = seconds
        print(f"  create_workflow_from_history, {count} jobs ({len(saved['steps'])} steps): {seconds:.2f} s")
