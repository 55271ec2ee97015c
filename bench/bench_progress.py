"""MCP progress notifications: what a progressToken costs a wait_for_jobs (time and bytes on the wire).

The same wait_for_jobs call as a raw POST to /api/mcp, with and without ``params._meta.progressToken``,
interleaved: without a token the answer is one JSON body (patch mcp-json-responses); with one it is
an SSE stream (notifications/progress, then the result).

- On two jobs that already finished (one poll, one notification).
- On a short real job (cat1, run just before each wait, so the wait sees it queued or running).
"""

import json

import httpx

from common import (
    fetch,
    median_seconds,
    timed,
)


def post_wait(http: httpx.Client, url: str, key: str, job_ids: list[str], token: str | None) -> httpx.Response:
    params: dict = {"name": "wait_for_jobs", "arguments": {"job_ids": job_ids, "timeout_seconds": 110}}
    if token is not None:
        params["_meta"] = {"progressToken": token}
    response = http.post(
        url,
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params},
        headers={"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18", "x-api-key": key},
    )
    response.raise_for_status()
    return response


def wire_bytes(response: httpx.Response) -> int:
    """Status line, headers and body as received (Galaxy does not compress these)."""
    head = len(f"HTTP/1.1 {response.status_code} {response.reason_phrase}\r\n") + 2
    head += sum(len(name) + len(value) + 4 for name, value in response.headers.raw)
    return head + len(response.content)


def notifications(response: httpx.Response) -> int:
    if not response.headers["content-type"].startswith("text/event-stream"):
        return 0
    events = [json.loads(line[5:]) for line in response.text.splitlines() if line.startswith("data:") and line[5:].strip()]
    return sum(event.get("method") == "notifications/progress" for event in events)


def measure(label: str, http, url, key, reps: int, jobs_for_rep) -> dict:
    figures: dict = {}
    samples: dict = {"json": [], "sse": []}
    sizes: dict = {"json": [], "sse": []}
    counts: dict = {"json": [], "sse": []}
    for rep in range(reps):  # interleaved so drift hits both sides alike
        for side, token in (("json", None), ("sse", f"bench-{rep}")):
            seconds, response = timed(post_wait, http, url, key, jobs_for_rep(), token)
            samples[side].append(seconds)
            sizes[side].append(wire_bytes(response))
            counts[side].append(notifications(response))
    for side in ("json", "sse"):
        figures[f"{side}_p50_s"] = median_seconds(samples[side])
        figures[f"{side}_bytes_p50"] = sorted(sizes[side])[len(sizes[side]) // 2]
        figures[f"{side}_notifications_p50"] = sorted(counts[side])[len(counts[side]) // 2]
    figures["sse_over_json_p50"] = figures["sse_p50_s"] / figures["json_p50_s"]
    print(
        f"  wait_for_jobs, {label}: without a token {figures['json_p50_s'] * 1000:.0f} ms, "
        f"{figures['json_bytes_p50']} bytes (JSON); with a token {figures['sse_p50_s'] * 1000:.0f} ms, "
        f"{figures['sse_bytes_p50']} bytes (SSE, {figures['sse_notifications_p50']} notifications) "
        f"-> time ratio {figures['sse_over_json_p50']:.2f}"
    )
    return figures


def run(galaxy, mcp, reps: int) -> dict:
    key = galaxy.api_key
    history = mcp.call_ok("create_history", name="bench-progress", api_key=key)["id"]
    source = fetch(galaxy, key, history, {"src": "pasted", "paste_content": "a\tb\n", "ext": "tabular"})["id"]

    def cat() -> list[str]:
        ran = mcp.call_ok("run_tool", history_id=history, tool_id="cat1",
                          inputs={"input1": {"src": "hda", "id": source}}, api_key=key)
        return [job["id"] for job in ran["jobs"]]

    finished = cat() + cat()
    mcp.call_ok("wait_for_jobs", job_ids=finished, timeout_seconds=110, api_key=key)
    with httpx.Client(timeout=130) as http:
        return {
            "finished": measure("2 finished jobs", http, galaxy.mcp_url, key, reps, lambda: finished),
            "short_job": measure("a short cat1 job run just before", http, galaxy.mcp_url, key, max(reps // 4, 3), cat),
        }
