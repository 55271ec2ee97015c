"""Per-call overhead: a small read tool (get_dataset_details) via MCP vs the REST call it wraps."""

from common import (
    fetch,
    percentile,
    timed,
)
from galaxy_mcp_analysis.testing import rest


def run(galaxy, mcp, calls: int, label: str = "") -> dict:
    key = galaxy.api_key
    history = rest(galaxy.galaxy_url, "/api/histories", key, {"name": "bench-overhead"})["id"]
    dataset_id = fetch(galaxy, key, history, {"src": "pasted", "paste_content": "a\t1\nb\t2\n", "ext": "tabular"})["id"]

    def via_mcp():
        return mcp.call_ok("get_dataset_details", dataset_id=dataset_id, api_key=key)

    def via_rest():
        return rest(galaxy.galaxy_url, f"/api/datasets/{dataset_id}", key)

    for _ in range(5):  # warm both paths
        via_mcp(), via_rest()
    mcp_times, rest_times = [], []
    for i in range(calls):  # interleaved, alternating which goes first, so drift hits both sides alike
        pair = (via_mcp, via_rest) if i % 2 == 0 else (via_rest, via_mcp)
        for call in pair:
            (mcp_times if call is via_mcp else rest_times).append(timed(call)[0])
    results = {"calls": calls}
    for name, fraction in (("p50", 0.50), ("p95", 0.95)):
        results[f"mcp_{name}_ms"] = 1000 * percentile(mcp_times, fraction)
        results[f"rest_{name}_ms"] = 1000 * percentile(rest_times, fraction)
        results[f"{name}_ratio"] = results[f"mcp_{name}_ms"] / results[f"rest_{name}_ms"]
        print(f"  {label}get_dataset_details {name} over {calls} calls: MCP {results[f'mcp_{name}_ms']:.1f} ms vs "
              f"REST GET /api/datasets/{{id}} {results[f'rest_{name}_ms']:.1f} ms "
              f"-> ratio {results[f'{name}_ratio']:.2f} (target <= 1.5)")
    return results
