"""Job engines (issue 50): a tool run and its wait to ok through MCP against Galaxy's REST API on each
engine, and a map-over on Slurm at growing sizes with the survey calls an agent makes while it runs.

One Galaxy routes to every engine installed here (``JOB_RUNNER=local,slurm,pulsar``, a user per engine
whose role sends their jobs there: test/job_engines_galaxy.py, as the tests do). Per engine, interleaved,
the order alternating: MCP ``run_tool`` + ``wait_for_jobs`` against ``POST /api/tools`` + polling
``GET /api/jobs/{id}`` at wait_for_jobs' own first interval (core.waiting: 0.25 s). The REST side's
median is the engine's own latency (submit to ok). On Slurm, for each size: a list of that many
elements mapped over by Cut1, submitted through ``run_tool`` and through ``POST /api/tools`` (two
histories; Cut1 run once through each first, the side that submits first alternating; 5 submits per side at
10 elements, 3 at 100 and 1,000, their median), then while the jobs queue and run the surveys, interleaved, both sides on
the first submitted history:
``wait_for_jobs(history_id, timeout 0)`` against ``GET /api/jobs?history_id``, ``list_jobs`` against the same, and
``get_history_contents`` against ``GET /api/histories/{id}/contents``. The jobs are cancelled after.
"""

import threading
import time

from common import (
    fetch,
    median_seconds,
    rest,
    timed,
)
from galaxy_mcp_analysis.core.waiting import FIRST_INTERVAL_SECONDS
from galaxy_mcp_analysis.testing import (
    LaunchedGalaxy,
    McpClient,
)
from job_engines_galaxy import (
    ENGINE_NAMES,
    engine_unavailable,
    engine_user,
)

TERMINAL = {"ok", "error", "deleted", "deleting", "failed", "skipped", "paused"}
TABLE = "chr1\t30\tb\nchr2\t4\ta\n"


def run(server: list[str], workdir, reps: int, sizes: list[int], survey_reps: int) -> dict:
    names = [name for name in ENGINE_NAMES if not engine_unavailable(name)]
    skipped = {name: engine_unavailable(name) for name in ENGINE_NAMES if name not in names}
    for name, reason in skipped.items():
        print(f"  {name}: not measured ({reason})")
    figures: dict = {"engines": {}, "skipped": skipped}
    began = time.monotonic()
    with LaunchedGalaxy(workdir / "runners" / "data", server=server, job_runner=",".join(names)) as galaxy:
        print(f"  Galaxy routing to {', '.join(names)} started in {time.monotonic() - began:.0f} s")
        with McpClient(galaxy.mcp_url) as mcp:
            keys = {name: engine_user(galaxy, name) for name in names}
            for name in names:
                figures["engines"][name] = one_job(galaxy, mcp, keys[name], name, reps)
            if "slurm" in names:
                figures["slurm_map_over"] = map_over_curve(galaxy, mcp, keys["slurm"], sizes, survey_reps)
    return figures


def one_job(galaxy, mcp, key: str, engine: str, reps: int) -> dict:
    """Two figures per engine. Side by side (independent jobs, interleaved): run_tool + wait_for_jobs against
    POST /api/tools + polling. And on the very same job, so the engine's latency cancels out: a REST poller
    (every 0.25 s) watches each MCP-run job, and the job's MCP time is set against what REST would have taken
    for that job (REST's submit, p50, plus that job's submit-to-ok as the poller saw it)."""
    history = mcp.call_ok("create_history", name=f"bench-{engine}", api_key=key)["id"]
    source = fetch(galaxy, key, history, {"src": "pasted", "paste_content": TABLE, "ext": "tabular"})["id"]
    inputs = {"input1": {"src": "hda", "id": source}}
    same_job: dict = {"submit": [], "total": [], "seen_by_rest": []}  # per MCP job, seconds from its start

    def through_mcp() -> None:
        began = time.perf_counter()
        ran = mcp.call_ok("run_tool", history_id=history, tool_id="cat1", inputs=inputs, api_key=key)
        submitted = time.perf_counter()
        job_id = ran["jobs"][0]["id"]
        seen: list = []
        watcher = threading.Thread(target=lambda: seen.append(poll_until_terminal(galaxy, key, job_id)))
        watcher.start()
        waited = mcp.call_ok("wait_for_jobs", job_ids=[job_id], timeout_seconds=110, api_key=key)
        ended = time.perf_counter()
        watcher.join()
        assert waited["jobs"][0]["state"] == "ok", waited
        same_job["submit"].append(submitted - began)
        same_job["total"].append(ended - began)
        same_job["seen_by_rest"].append(seen[0] - began)

    def through_rest() -> None:
        began = time.perf_counter()
        ran = rest(galaxy.galaxy_url, "/api/tools", key, {"tool_id": "cat1", "history_id": history, "inputs": inputs})
        rest_submits.append(time.perf_counter() - began)
        poll_until_terminal(galaxy, key, ran["jobs"][0]["id"])

    rest_submits: list = []
    through_mcp(), through_rest()  # warm both paths (the engine's first job, the tool's first load)
    for values in (*same_job.values(), rest_submits):
        values.clear()
    samples: dict = {"mcp": [], "rest": []}
    for rep in range(reps):
        sides = [("mcp", through_mcp), ("rest", through_rest)]
        for side, function in sides if rep % 2 == 0 else reversed(sides):
            samples[side].append(timed(function)[0])
    result = {side: median_seconds(values) for side, values in samples.items()}
    result["mcp_over_rest"] = result["mcp"] / result["rest"]
    result["samples"] = samples  # an engine's latency is not normal (Slurm's: bimodal in two runs): keep them
    result.update(same_job_figures(same_job, median_seconds(rest_submits)))
    print(f"  {engine}: cat1 submitted and waited to ok, p50 of {reps}: MCP {result['mcp']:.2f} s, REST polling "
          f"{result['rest']:.2f} s -> {result['mcp_over_rest']:.2f}; the same job: MCP / REST "
          f"{result['same_job_mcp_over_rest']:.3f} (engine {result['engine_latency']:.2f} s, submit MCP "
          f"{result['submit_mcp'] * 1000:.0f} / REST {result['submit_rest'] * 1000:.0f} ms, wait_for_jobs after "
          f"the REST poller {result['wait_after_rest'] * 1000:+.0f} ms)")
    return result


def poll_until_terminal(galaxy, key: str, job_id: str) -> float:
    """Polls the job every 0.25 s (wait_for_jobs' first interval) until it ends ok; the moment it saw it end."""
    while (state := rest(galaxy.galaxy_url, f"/api/jobs/{job_id}", key)["state"]) not in TERMINAL:
        time.sleep(FIRST_INTERVAL_SECONDS)
    assert state == "ok", state
    return time.perf_counter()


def same_job_figures(same_job: dict, submit_rest: float) -> dict:
    """Per MCP job: its time against REST's for the same job (REST's submit p50 + the job's submit-to-ok seen
    by the REST poller); the engine's latency (that submit-to-ok) reported apart."""
    ratios, latencies, lateness = [], [], []
    for submit, total, seen in zip(same_job["submit"], same_job["total"], same_job["seen_by_rest"]):
        latency = seen - submit
        latencies.append(latency)
        lateness.append(total - seen)
        ratios.append(total / (submit_rest + latency))
    return {
        "same_job_mcp_over_rest": median_seconds(ratios),
        "same_job_ratios": ratios,
        "engine_latency": median_seconds(latencies),
        "submit_mcp": median_seconds(same_job["submit"]),
        "submit_rest": submit_rest,
        "wait_after_rest": median_seconds(lateness),
    }


def map_over_curve(galaxy, mcp, key: str, sizes: list[int], survey_reps: int) -> dict:
    curve: dict = {}
    seed = mcp.call_ok("create_history", name="bench-map-over-data", api_key=key)["id"]
    source = fetch(galaxy, key, seed, {"src": "pasted", "paste_content": TABLE, "ext": "tabular"})["id"]
    # Cut1 once through each side first: the first request for a tool builds Galaxy's caches of it (its parameter
    # model, the request's validation), which whichever side came first paid alone in runs 1-4 (the 10-element
    # submit, 1.4-1.8 of REST there).
    single = {"input": {"src": "hda", "id": source}, "columnList": "c1", "delimiter": "T"}
    mcp.call_ok("run_tool", history_id=seed, tool_id="Cut1", inputs=single, api_key=key)
    rest(galaxy.galaxy_url, "/api/tools", key, {"tool_id": "Cut1", "history_id": seed, "inputs": single})
    for order, size in enumerate(sizes):
        # A submit's time swings with what the job handler is doing at that moment (a 10-element submit took 219 to
        # 963 ms through REST in one quiet run), so the smaller sizes take several samples per side, the order
        # alternating. Both sides survey one history, the first sample's first submitted (its jobs queued first): on
        # two histories (runs 1-6) each side read jobs in other states (one history's jobs ahead of the other's in
        # Slurm's queue), and the same code's ratios moved by 0.6 between runs. Every sample's jobs are cancelled
        # after the surveys, so no cancelling runs beside them.
        samples: dict[str, list[float]] = {"mcp": [], "rest": []}
        spare_jobs: list[str] = []
        for sample in range(submit_samples(size)):
            histories, ran = {}, {}
            sides = ("mcp", "rest") if (order + sample) % 2 == 0 else ("rest", "mcp")
            for side in sides:
                histories[side], collection = map_over_input(galaxy, key, source, side, size)
                seconds, ran[side] = submit_map_over(galaxy, mcp, key, side, histories[side], collection)
                assert len(ran[side]["jobs"]) == size, len(ran[side]["jobs"])
                samples[side].append(seconds)
            jobs = [job["id"] for job in ran["mcp"]["jobs"] + ran["rest"]["jobs"]]
            if sample == 0:
                surveyed, surveyed_jobs = histories[sides[0]], jobs
            else:
                spare_jobs += jobs
        submit_mcp, submit_rest = median_seconds(samples["mcp"]), median_seconds(samples["rest"])
        point = {"submit_mcp": submit_mcp, "submit_rest": submit_rest, "submit_samples": samples,
                 "surveyed_history_submitted_by": "mcp" if order % 2 == 0 else "rest",
                 **surveys(galaxy, mcp, key, surveyed, size, survey_reps)}
        for pair in ("submit", "wait_for_jobs", "list_jobs", "get_history_contents"):
            point[f"{pair}_mcp_over_rest"] = point[f"{pair}_mcp"] / point[f"{pair}_rest"]
        curve[size] = point
        print(f"  Slurm map-over of {size:,}: " + "; ".join(
            f"{pair} MCP {point[f'{pair}_mcp'] * 1000:.0f} ms / REST {point[f'{pair}_rest'] * 1000:.0f} ms "
            f"= {point[f'{pair}_mcp_over_rest']:.2f}" for pair in ("submit", "wait_for_jobs", "list_jobs",
                                                                    "get_history_contents")))
        cancelled = cancel_all(galaxy, key, surveyed_jobs + spare_jobs)
        print(f"    ({cancelled} of its {len(surveyed_jobs) + len(spare_jobs)} jobs cancelled unfinished; submits: "
              f"{len(samples['mcp'])} per side)")
    if len(curve) > 1:
        first, last = min(curve), max(curve)
        curve["growth"] = {
            pair: {
                **{side: curve[last][f"{pair}_{side}"] / curve[first][f"{pair}_{side}"] for side in ("mcp", "rest")},
                # The time each added element adds: unlike the ratio of the two ends, not moved by the smaller end's
                # own time (a side that is faster at 10 elements reads as growing faster by that ratio alone).
                **{f"{side}_per_element": (curve[last][f"{pair}_{side}"] - curve[first][f"{pair}_{side}"])
                   / (last - first) for side in ("mcp", "rest")},
            }
            for pair in ("submit", "wait_for_jobs", "list_jobs", "get_history_contents")
        }
    return curve


def submit_samples(size: int) -> int:
    """Submits per side at a size: 5 up to 10 elements, 3 above (at 1,000 run 5-7's single samples read 0.78, 0.91
    and 1.14 of REST for the same code)."""
    return 5 if size <= 10 else 3


def map_over_input(galaxy, key: str, source: str, side: str, size: int) -> tuple[str, str]:
    """A new history holding a list of ``size`` elements (each the bench's table): its id and the list's."""
    history = rest(galaxy.galaxy_url, "/api/histories", key, {"name": f"bench {side} {size}"})["id"]
    collection = rest(galaxy.galaxy_url, f"/api/histories/{history}/contents", key, {
        "type": "dataset_collection", "collection_type": "list", "copy_elements": False,
        "element_identifiers": [{"name": f"e{n}", "src": "hda", "id": source} for n in range(size)],
    })["id"]
    return history, collection


def submit_map_over(galaxy, mcp, key: str, side: str, history: str, collection: str) -> tuple[float, dict]:
    """Cut1 mapped over ``collection``, through run_tool or POST /api/tools: the seconds it took and its answer."""
    inputs = {"input": {"batch": True, "values": [{"src": "hdca", "id": collection}]}, "columnList": "c1",
              "delimiter": "T"}
    if side == "mcp":
        return timed(mcp.call_ok, "run_tool", history_id=history, tool_id="Cut1", inputs=inputs, api_key=key)
    return timed(rest, galaxy.galaxy_url, "/api/tools", key,
                 {"tool_id": "Cut1", "history_id": history, "inputs": inputs})


def surveys(galaxy, mcp, key: str, history: str, size: int, reps: int) -> dict:
    """The calls an agent makes while the jobs run, MCP and REST interleaved, both on ``history``: each pair of
    calls reads the same jobs in (nearly) the same states."""
    url = galaxy.galaxy_url
    calls = {
        "wait_for_jobs": (
            lambda: mcp.call_ok("wait_for_jobs", history_id=history, timeout_seconds=0, api_key=key),
            lambda: rest(url, f"/api/jobs?history_id={history}&limit={size + 10}", key)),
        "list_jobs": (
            lambda: mcp.call_ok("list_jobs", history_id=history, limit=min(size + 10, 500), api_key=key),
            lambda: rest(url, f"/api/jobs?history_id={history}&limit={min(size + 10, 500)}", key)),
        "get_history_contents": (
            lambda: mcp.call_ok("get_history_contents", history_id=history, limit=100, api_key=key),
            lambda: rest(url, f"/api/histories/{history}/contents?v=dev&limit=100", key)),
    }
    figures = {}
    for name, (through_mcp, through_rest) in calls.items():
        samples: dict = {"mcp": [], "rest": []}
        for rep in range(reps):
            for side in ("mcp", "rest") if rep % 2 == 0 else ("rest", "mcp"):
                samples[side].append(timed(through_mcp if side == "mcp" else through_rest)[0])
        figures[f"{name}_mcp"], figures[f"{name}_rest"] = median_seconds(samples["mcp"]), median_seconds(samples["rest"])
    return figures


def cancel_all(galaxy, key: str, job_ids: list[str]) -> int:
    """Galaxy's stop of every job not finished yet (four at a time: a map-over of 1,000 is 2,000 jobs)."""
    from concurrent.futures import ThreadPoolExecutor

    def cancel(job_id: str) -> bool:
        return rest(galaxy.galaxy_url, f"/api/jobs/{job_id}", key, method="DELETE") is True

    with ThreadPoolExecutor(4) as pool:
        return sum(pool.map(cancel, job_ids))
