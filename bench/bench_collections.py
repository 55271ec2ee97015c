"""create_collection through MCP vs Galaxy's REST POST /api/dataset_collections, and growth with size."""

from common import (
    fetch,
    median_seconds,
    timed,
)
from galaxy_mcp_analysis.testing import rest

LARGE_CALL_TIMEOUT = 1800  # 10,000 elements took 33 s on an idle machine and over 60 s on a busy one


def run(galaxy, mcp, sizes: list[int], reps: int) -> dict:
    key = galaxy.api_key
    history = mcp.call_ok("create_history", name="bench-collections", api_key=key)["id"]
    dataset = fetch(galaxy, key, history, {"src": "pasted", "paste_content": ">s\nACGT\n", "ext": "fasta"})

    def identifiers(n):  # one dataset under n names: measures collection building, not uploads
        return [{"name": f"e{i}", "src": "hda", "id": dataset["id"]} for i in range(n)]

    def via_mcp(n):
        return mcp.call_ok("create_collection", history_id=history, collection_type="list",
                           element_identifiers=identifiers(n), api_key=key)

    def via_rest(n):
        return rest(galaxy.galaxy_url, "/api/dataset_collections", key, {
            "history_id": history, "collection_type": "list", "copy_elements": True,
            "element_identifiers": identifiers(n)}, timeout=LARGE_CALL_TIMEOUT)

    results = {}
    for n in sizes:
        mcp_times, rest_times = [], []
        for _ in range(reps):  # interleaved so drift hits both sides alike
            mcp_times.append(timed(via_mcp, n)[0])
            rest_times.append(timed(via_rest, n)[0])
        results[n] = {"mcp_s": median_seconds(mcp_times), "rest_s": median_seconds(rest_times)}
        results[n]["mcp_over_rest"] = results[n]["mcp_s"] / results[n]["rest_s"]
        print(f"  list of {n:>6} elements: MCP {results[n]['mcp_s']:.2f} s vs REST {results[n]['rest_s']:.2f} s "
              f"-> ratio {results[n]['mcp_over_rest']:.2f} (target <= 1.2)")
    if len(sizes) > 1:
        small, large = sizes[0], sizes[-1]
        growth = results[large]["mcp_s"] / results[small]["mcp_s"]
        print(f"  MCP time grows {growth:.1f}x from {small} to {large} elements ({large / small:.0f}x more; "
              "linear means about the same)")
        results["growth"] = growth
    return results
