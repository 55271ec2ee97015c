"""Tool inputs: get_tool_input_schema cold and warm, the preflight's share of run_tool, schema bytes per tool.

Cold is the first call for a tool in a freshly started server (one sample per tool: the
cache then holds it until the toolbox reloads); warm is the median of ``reps`` later calls.
The preflight's cost is bounded by run_tool (MCP, preflight) against Galaxy's own
POST /api/tools with the same inputs (REST, no check): the difference also holds MCP's
per-call overhead. check_tool_inputs (the same check as a dry run) is printed beside them.

Each timed run's job is waited for and its output deleted, untimed, before the next call: a sort1
job (its run and its metadata step) takes far more CPU than the calls compared, and left running it
lands on whichever call comes next (on 2 cores the ratio ranged 0.75-1.44 from one run to the
next), while a growing history slows every later call (Galaxy lists its datasets on each run).
The two sides alternate which goes first; ``runs`` repeated series give the spread.
"""

import json
import statistics

from aio import (
    show,
    spread,
)
from common import (
    fetch,
    timed,
    wait_for_job,
)
from galaxy_mcp_analysis.testing import rest


def run(galaxy, mcp, reps: int, runs: int = 3) -> dict:
    key = galaxy.api_key
    panel = rest(galaxy.galaxy_url, "/api/tools", key)
    tool_ids = sorted({tool["id"] for entry in panel for tool in entry.get("elems", [entry])
                       if tool.get("model_class") == "Tool"})  # not the panel's labels
    cold, sizes = {}, {}
    for tool_id in tool_ids:  # the first call of each tool in this server: cold
        seconds, answer = timed(mcp.call_ok, "get_tool_input_schema", tool_id=tool_id, api_key=key)
        cold[tool_id], sizes[tool_id] = seconds, len(json.dumps(answer))
    largest = max(sizes, key=sizes.get)
    results: dict = {
        "tools": len(tool_ids),
        "schema_bytes_median": statistics.median(sizes.values()),
        "schema_bytes_max": sizes[largest],
        "largest_tool": largest,
        "sort1_bytes": sizes.get("sort1"),
    }
    print(f"  answer bytes over {len(tool_ids)} tools: median {results['schema_bytes_median']:.0f}, "
          f"max {sizes[largest]} ({largest}); sort1 {sizes.get('sort1')}")
    for tool_id in ("sort1", largest):
        warm = [timed(mcp.call_ok, "get_tool_input_schema", tool_id=tool_id, api_key=key)[0] for _ in range(reps)]
        results[f"{tool_id}_cold_ms"] = 1000 * cold[tool_id]
        results[f"{tool_id}_warm_p50_ms"] = 1000 * statistics.median(warm)
        print(f"  get_tool_input_schema {tool_id}: cold {results[f'{tool_id}_cold_ms']:.1f} ms, "
              f"warm p50 {results[f'{tool_id}_warm_p50_ms']:.1f} ms ({reps} calls)")

    history = rest(galaxy.galaxy_url, "/api/histories", key, {"name": "bench-tool-inputs"})["id"]
    dataset = fetch(galaxy, key, history, {"src": "pasted", "paste_content": "b\t2\na\t1\n", "ext": "tabular"})
    inputs = {"input": {"src": "hda", "id": dataset["id"]}, "column": "2", "order": "ASC", "style": "num"}

    def via_run_tool():
        return mcp.call_ok("run_tool", history_id=history, tool_id="sort1", inputs=inputs, api_key=key)

    def via_check():
        return mcp.call_ok("check_tool_inputs", history_id=history, tool_id="sort1", inputs=inputs, api_key=key)

    def via_rest():
        return rest(galaxy.galaxy_url, "/api/tools", key, {"history_id": history, "tool_id": "sort1", "inputs": inputs})

    def settled(answer) -> None:
        """Untimed: the call's jobs finish and its outputs are deleted, so no job runs beside the next
        timed call and every call sees the same history (Galaxy lists its datasets on each run)."""
        for job in answer["jobs"]:
            wait_for_job(galaxy, key, job["id"])
        for output in answer["outputs"]:
            rest(galaxy.galaxy_url, f"/api/histories/{history}/contents/{output['id']}", key, method="DELETE")

    per_run = []
    for _ in range(runs):
        times: dict[str, list[float]] = {"run_tool": [], "check_tool_inputs": [], "rest": []}
        sides = (("run_tool", via_run_tool), ("rest", via_rest))
        for rep in range(reps):  # interleaved so drift hits both sides alike, each side first in turn
            for name, call in sides if rep % 2 == 0 else sides[::-1]:
                seconds, answer = timed(call)
                times[name].append(seconds)
                settled(answer)
            times["check_tool_inputs"].append(timed(via_check)[0])
        per_run.append({name: 1000 * statistics.median(samples) for name, samples in times.items()})
    for name in ("run_tool", "check_tool_inputs", "rest"):
        results[f"{name}_p50_ms"] = spread([run[name] for run in per_run])
    # An upper bound: MCP's own per-call overhead is in it too.
    share = spread([run["run_tool"] / run["rest"] - 1 for run in per_run])
    results["preflight_share"] = share
    print(f"  sort1 p50, {runs} runs x {reps} calls (median [min-max] of runs): run_tool (MCP, with preflight) "
          f"{show(results['run_tool_p50_ms'])}, POST /api/tools (REST, no check) {show(results['rest_p50_ms'])} -> "
          f"preflight + MCP overhead {100 * share['median']:.0f}% [{100 * share['min']:.0f}-{100 * share['max']:.0f}%] "
          f"(target <= 10%); check_tool_inputs alone {show(results['check_tool_inputs_p50_ms'])}")
    rest(galaxy.galaxy_url, f"/api/histories/{history}", key, {"purge": True}, method="DELETE")
    return results
