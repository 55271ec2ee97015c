"""Pasted upload to ``ok``: MCP create_dataset_from_text + waiting vs REST /api/tools/fetch + polling.

Three ways, interleaved, the same content each time:
- MCP as an agent would: create_dataset_from_text, then wait_for_jobs (one blocking call whose
  server-side polls back off from 0.25 s to 2 s), then get_dataset_details until the dataset is terminal;
- MCP polling: create_dataset_from_text, then get_dataset_details every POLL seconds;
- REST: POST /api/tools/fetch with a pasted element, then GET /api/datasets/{id} every POLL seconds.
The two polling ways isolate the cost of the MCP layer; the first shows what wait_for_jobs costs
or saves against a tight polling loop.
"""

import time

from common import median_seconds
from galaxy_mcp_analysis.testing import rest

POLL = 0.1
TIMEOUT = 300
TERMINAL = {"ok", "error", "failed_metadata", "discarded", "deferred", "paused"}
CONTENT = "".join(f"chr1\t{i * 100}\t{i * 100 + 50}\tpeak{i}\n" for i in range(50))


def run(galaxy, mcp, reps: int) -> dict:
    key = galaxy.api_key
    history_id = mcp.call_ok("create_history", name="bench-upload", api_key=key)["id"]

    def mcp_state(dataset_id):
        return mcp.call_ok("get_dataset_details", dataset_id=dataset_id, api_key=key)["dataset"]["state"]

    def poll_mcp(dataset_id):
        deadline = time.monotonic() + TIMEOUT
        while (state := mcp_state(dataset_id)) not in TERMINAL:
            if time.monotonic() > deadline:
                break
            time.sleep(POLL)
        return state

    def mcp_wait():
        created = mcp.call_ok("create_dataset_from_text", history_id=history_id, content=CONTENT,
                              file_type="bed", api_key=key)
        mcp.call_ok("wait_for_jobs", job_ids=[created["job_id"]], timeout_seconds=120, api_key=key)
        return poll_mcp(created["dataset_id"])

    def mcp_poll():
        created = mcp.call_ok("create_dataset_from_text", history_id=history_id, content=CONTENT,
                              file_type="bed", api_key=key)
        return poll_mcp(created["dataset_id"])

    def rest_poll():
        response = rest(galaxy.galaxy_url, "/api/tools/fetch", key, {"history_id": history_id, "targets": [{
            "destination": {"type": "hdas"},
            "elements": [{"src": "pasted", "paste_content": CONTENT, "ext": "bed"}]}]})
        dataset_id = response["outputs"][0]["id"]
        deadline = time.monotonic() + TIMEOUT
        while (state := rest(galaxy.galaxy_url, f"/api/datasets/{dataset_id}", key)["state"]) not in TERMINAL:
            if time.monotonic() > deadline:
                break
            time.sleep(POLL)
        return state

    ways = {"mcp_wait_for_jobs": mcp_wait, "mcp_polling": mcp_poll, "rest_polling": rest_poll}
    times: dict[str, list[float]] = {name: [] for name in ways}
    not_ok: list[str] = []
    names = list(ways)
    for rep in range(reps):  # interleaved and rotated, so drift and queue position hit every way alike
        for name in names[rep % 3:] + names[:rep % 3]:
            start = time.perf_counter()
            state = ways[name]()
            times[name].append(time.perf_counter() - start)
            if state != "ok":
                not_ok.append(f"{name}: {state}")
    results = {f"{name}_s": median_seconds(samples) for name, samples in times.items()}
    results["wait_for_jobs_over_rest"] = results["mcp_wait_for_jobs_s"] / results["rest_polling_s"]
    results["polling_over_rest"] = results["mcp_polling_s"] / results["rest_polling_s"]
    results["not_ok"] = not_ok
    print(f"  pasted BED to ok, median of {reps}: MCP create_dataset_from_text + wait_for_jobs "
          f"{results['mcp_wait_for_jobs_s']:.2f} s, MCP + polling get_dataset_details "
          f"{results['mcp_polling_s']:.2f} s, "
          f"REST fetch + polling {results['rest_polling_s']:.2f} s (polls every {POLL} s)")
    print(f"  -> ratio wait_for_jobs/REST {results['wait_for_jobs_over_rest']:.2f}, "
          f"polling MCP/REST {results['polling_over_rest']:.2f} (target about 1); not ok: {len(not_ok)}")
    return results
