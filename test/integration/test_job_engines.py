"""Issue 50: every job-facing tool holds on each job engine (Galaxy's local runner, Slurm, Pulsar).

One Galaxy routes to every engine (test/job_engines_galaxy.py: ``JOB_RUNNER=local,slurm,pulsar``, started by
the same launcher as ``make serve``): the same tests run as each engine's user, whose role sends their jobs
there. What an engine records of the jobs it ran (``job_runner_log``: Slurm's job completion log) and the
runner Galaxy's record names show the jobs went there. An engine whose programs are not installed is
skipped here, and CI (.ci/run) installs every engine and sets GALAXY_MCP_ANALYSIS_REQUIRE_ENGINES, so there
a missing engine fails instead. Faults (Slurm): the controller stopped while a job runs, and a job killed
at its time limit.
"""

import os
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from conftest import fetch, wait_for_dataset
from galaxy_mcp_analysis.serve.engines import start_engine
from galaxy_mcp_analysis.testing import (
    McpClient,
    rest,
)
from galaxy_mcp_analysis.testing.audit import audit_lines
from galaxy_mcp_analysis.serve.engines.base import pid_running
from galaxy_mcp_analysis.serve.engines.slurm import program
from job_engines_galaxy import (
    ENGINE_NAMES,
    require_engine,
)

TABLE = "chr1\t30\tb\nchr2\t4\ta\nchr3\t200\tc\nchr10\t4\td\n"
CUT_COMPLAINT = "No columns specified, columns are not preceded with 'c'"
#: Galaxy's Slurm job plugin's message for a job Slurm killed at its time limit (the TIMEOUT state).
WALLTIME_MESSAGE = "ran longer than the maximum allowed job run time"


# ---- one Galaxy, a user per engine ----


@pytest.fixture(scope="module", params=ENGINE_NAMES)
def galaxy_on(request, engine_galaxy):
    return engine_galaxy(request.param)


@pytest.fixture(scope="module")
def mcp_on(galaxy_on):
    with McpClient(galaxy_on.mcp_url) as client:
        yield client


@pytest.fixture(scope="module")
def key(galaxy_on):
    return galaxy_on.api_key


@pytest.fixture(scope="module")
def history(mcp_on, key):
    return mcp_on.call_ok("create_history", name="job engines", api_key=key)["id"]


@pytest.fixture(scope="module")
def table(galaxy_on, key, history):
    pasted = fetch(galaxy_on, key, history, {"src": "pasted", "paste_content": TABLE, "ext": "tabular"}, wait=False)
    # The first upload starts Celery's task process pool: minutes on a busy 2-core machine.
    dataset = wait_for_dataset(galaxy_on, key, pasted["id"], timeout=600)
    assert dataset["state"] == "ok", dataset
    return dataset["id"]


def hda(dataset_id: str) -> dict:
    return {"src": "hda", "id": dataset_id}


def finished(mcp, key, **names) -> dict:
    waited = mcp.call_ok("wait_for_jobs", timeout_seconds=110, api_key=key, **names)
    assert waited["all_terminal"] and not waited["timed_out"], waited
    return waited


def states(waited: dict) -> dict[str, str]:
    return {entry["job_id"]: entry["state"] for entry in waited["jobs"]}


def admin_job(galaxy, job_id: str) -> dict:
    return rest(galaxy.galaxy_url, f"/api/jobs/{job_id}?full=true", galaxy.admin_api_key)


def assert_ran_on_the_engine(galaxy, job_ids: list[str]) -> None:
    """Where the jobs ran: Galaxy's record names the engine's runner (the user's route), and on Slurm each
    job's Slurm id has its line in Slurm's completion log."""
    listed = rest(galaxy.galaxy_url, "/api/jobs?view=admin_job_list&limit=1000", galaxy.admin_api_key)
    runners = {job["id"]: job["job_runner_name"] for job in listed if job["id"] in job_ids}
    assert set(runners) == set(job_ids), (runners, job_ids)
    assert {runner.split(":")[0] for runner in runners.values()} == {galaxy.engine}, runners
    if galaxy.engine == "slurm":
        recorded = (galaxy.engine_root / "jobs.log").read_text()
        for job_id in job_ids:
            job = admin_job(galaxy, job_id)
            assert job.get("external_id") and f"JobId={job['external_id']} " in recorded, job


def slurm(galaxy, *command: str) -> subprocess.CompletedProcess:
    return subprocess.run([program(command[0]), *command[1:]], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "SLURM_CONF": str(galaxy.engine_root / "slurm.conf")})


def until(check, what: str, timeout: float = 90):
    deadline = time.monotonic() + timeout
    while not (found := check()):
        assert time.monotonic() < deadline, f"{what} did not happen in {timeout}s"
        time.sleep(0.3)
    return found


def running(galaxy, key, job_id) -> bool:
    return rest(galaxy.galaxy_url, f"/api/jobs/{job_id}", key)["state"] == "running"


def sleeping(mcp, key, history, seconds: int) -> tuple[str, str]:
    """(job id, output id) of a job that runs ``seconds`` on the engine, then writes its output."""
    ran = mcp.call_ok("run_tool", history_id=history, tool_id="engine_test_sleep", inputs={"seconds": seconds},
                      api_key=key)
    return ran["jobs"][0]["id"], ran["outputs"][0]["id"]


# ---- the job tools on each engine ----


def test_the_server_names_its_engines_and_routes(galaxy_on):
    info = galaxy_on.info
    assert info["job_runner"] == ",".join(galaxy_on.engines) and galaxy_on.engine in galaxy_on.engines, info
    route = galaxy_on.route
    if len(galaxy_on.engines) > 1:  # several engines: a route each, the first the default
        assert info["job_routes"][galaxy_on.engine] == route and route["role"] == galaxy_on.engine, info
        assert route["default"] == (galaxy_on.engine == ENGINE_NAMES[0]), route
    if galaxy_on.engine == "slurm":
        assert Path(route["job_runner_log"]) == galaxy_on.engine_root / "jobs.log"
    print(f"\n{galaxy_on.engine}: the engines' Galaxy started in {galaxy_on.start_seconds:.1f} s")


def test_one_job_and_a_map_over_of_four_reach_ok_with_progress(galaxy_on, mcp_on, key, table):
    history = mcp_on.call_ok("create_history", name="map over", api_key=key)["id"]
    elements = [{"name": f"s{n}", "src": "hda", "id": table} for n in range(4)]
    samples = mcp_on.call_ok("create_collection", history_id=history, collection_type="list", copy_elements=False,
                             element_identifiers=elements, api_key=key)["collection_id"]
    began = time.monotonic()
    one = mcp_on.call_ok("run_tool", history_id=history, tool_id="cat1", inputs={"input1": hda(table)}, api_key=key)
    mapped = mcp_on.call_ok("run_tool", history_id=history, tool_id="Cut1", api_key=key,
                            inputs={"input": {"batch": True, "values": [{"src": "hdca", "id": samples}]},
                                    "columnList": "c2", "delimiter": "T"})
    job_ids = [job["id"] for job in one["jobs"] + mapped["jobs"]]
    assert len(job_ids) == 5
    result, reported = mcp_on.call_with_progress("wait_for_jobs", {"history_id": history, "timeout_seconds": 110,
                                                                   "api_key": key})
    elapsed = time.monotonic() - began
    assert not result.is_error, result
    waited = result.structured_content
    assert waited["all_terminal"] and set(states(waited).values()) == {"ok"}, waited
    assert set(job_ids) <= set(states(waited)), waited
    progress = [done for done, _, _ in reported]
    assert reported and progress == sorted(progress) and reported[-1][0] == reported[-1][1], reported
    print(f"\n{galaxy_on.engine}: 5 jobs (1 + a map-over of 4) submitted and ok in {elapsed:.1f} s; "
          f"progress: {[message for _, _, message in reported]}")
    assert_ran_on_the_engine(galaxy_on, job_ids)
    [output] = mapped["implicit_collections"]
    elements = mcp_on.call_ok("get_collection_details", collection_id=output["id"], api_key=key)["collection"]["elements"]
    first = mcp_on.call_ok("peek_dataset_content", dataset_id=elements[0]["object"]["id"], api_key=key)
    assert first["content"] == "30\n4\n200\n4\n", first


def test_a_job_is_seen_queued_or_running_then_ok(galaxy_on, mcp_on, key, history):
    """The states on the way, as the engine reports them, while the job sleeps there."""
    job_id, _ = sleeping(mcp_on, key, history, 6)
    seen = []

    def observed():
        state = mcp_on.call_ok("wait_for_jobs", job_ids=[job_id], timeout_seconds=0, api_key=key)["jobs"][0]["state"]
        if not seen or seen[-1] != state:
            seen.append(state)
        return state not in ("new", "queued", "running")
    until(observed, "the job ending")
    assert seen[-1] == "ok" and "running" in seen, seen
    assert set(seen) <= {"new", "queued", "running", "ok"}, seen
    assert_ran_on_the_engine(galaxy_on, [job_id])


def test_a_failing_job_reports_the_engines_exit_code_and_logs(galaxy_on, mcp_on, key, history, table):
    failing = mcp_on.call_ok("run_tool", history_id=history, tool_id="Cut1", api_key=key,
                             inputs={"input": hda(table), "columnList": "NOT-COLUMNS", "delimiter": "T"})
    [job] = failing["jobs"]
    assert states(finished(mcp_on, key, job_ids=[job["id"]])) == {job["id"]: "error"}
    report = mcp_on.call_ok("get_job_errors", job_id=job["id"], api_key=key)
    assert (report["state"], report["exit_code"]) == ("error", 255), report
    assert report["tool_stderr"].startswith(CUT_COMPLAINT), report
    assert report["tool_stdout"] == "" and report["suspected_silent_failure"] is False, report
    assert report["failed_outputs"] and report["failed_outputs"][0]["dataset_id"] == failing["outputs"][0]["id"]
    assert_ran_on_the_engine(galaxy_on, [job["id"]])


def test_an_empty_output_of_an_ok_job_is_a_suspected_silent_failure(galaxy_on, mcp_on, key, history, table):
    ran = mcp_on.call_ok("run_tool", history_id=history, tool_id="Grep1", api_key=key,
                         inputs={"input": hda(table), "pattern": "no-such-row", "invert": "", "keep_header": False})
    [job] = ran["jobs"]
    [entry] = finished(mcp_on, key, job_ids=[job["id"]])["jobs"]
    assert entry["state"] == "ok" and entry["empty_outputs"], entry


def test_cancel_a_running_job_ends_it_on_the_engine(galaxy_on, mcp_on, key, history):
    job_id, output_id = sleeping(mcp_on, key, history, 301)
    until(lambda: running(galaxy_on, key, job_id), "the job running")
    external = admin_job(galaxy_on, job_id).get("external_id")
    cancelled = mcp_on.call_ok("cancel_job", job_id=job_id, api_key=key)
    assert cancelled["previous_state"] == "running" and cancelled["state"] in ("deleting", "deleted"), cancelled
    assert finished(mcp_on, key, job_ids=[job_id])["jobs"][0]["state"] == "deleted"
    if galaxy_on.engine == "slurm":
        # Gone from the queue: squeue lists no pending, running or completing job by that id.
        until(lambda: not slurm(galaxy_on, "squeue", "-h", "-j", external, "-t", "PD,R,CG").stdout.strip(),
              f"Slurm job {external} leaving squeue")
        log = until(lambda: [line for line in (galaxy_on.engine_root / "jobs.log").read_text().splitlines()
                             if line.startswith(f"JobId={external} ")], "the completion log's line")
        assert "JobState=CANCELLED" in log[-1], log
    # Nothing keeps running: no sleep of that job is left on the machine.
    until(lambda: not [p for p in engine_jobs(galaxy_on) if "sleep 301" in p], "the job's processes ending", 30)


def engine_jobs(galaxy) -> list[str]:
    """Command lines of processes running in the Galaxy's job directories (the tools' own commands)."""
    return [p for p in processes() if str(galaxy.data_dir) in p or "sleep " in p]


def processes() -> list[str]:
    found = []
    for proc in Path("/proc").iterdir():
        try:
            found.append((proc / "cmdline").read_bytes().replace(b"\0", b" ").decode())
        except OSError:
            continue
    return found


def test_rerun_with_replaced_outputs_resumes_the_paused_job(galaxy_on, mcp_on, key, history, table):
    failing = mcp_on.call_ok("run_tool", history_id=history, tool_id="Cut1", api_key=key,
                             inputs={"input": hda(table), "columnList": "NOT-COLUMNS", "delimiter": "T"})
    [failed_job] = failing["jobs"]
    waiting = mcp_on.call_ok("run_tool", history_id=history, tool_id="cat1", api_key=key,
                             inputs={"input1": hda(failing["outputs"][0]["id"])})
    [paused_job] = waiting["jobs"]
    waited = finished(mcp_on, key, job_ids=[failed_job["id"], paused_job["id"]])
    assert states(waited) == {failed_job["id"]: "error", paused_job["id"]: "paused"}, waited
    rerun = mcp_on.call_ok("rerun_job", job_id=failed_job["id"], changes={"columnList": "c2,c1"},
                           replace_outputs=True, api_key=key)
    assert rerun["replaced_outputs"] is True and rerun["resumed_jobs"] == [paused_job["id"]], rerun
    [new_job] = rerun["jobs"]
    waited = finished(mcp_on, key, job_ids=[new_job["id"], paused_job["id"]])
    assert states(waited) == {new_job["id"]: "ok", paused_job["id"]: "ok"}, waited
    read = mcp_on.call_ok("peek_dataset_content", dataset_id=waiting["outputs"][0]["id"], api_key=key)
    assert read["content"] == "30\tchr1\n4\tchr2\n200\tchr3\n4\tchr10\n", read
    assert_ran_on_the_engine(galaxy_on, [new_job["id"], paused_job["id"]])


def test_a_workflow_on_a_list_runs_with_its_progress(galaxy_on, mcp_on, key, history, table):
    workflow = mcp_on.call_ok("create_workflow", api_key=key, definition={
        "class": "GalaxyWorkflow", "inputs": {"samples": {"type": "collection", "collection_type": "list"}},
        "steps": {"cut": {"tool_id": "Cut1", "in": {"input": "samples"},
                          "state": {"columnList": "c1", "delimiter": "T"}}}})["workflow_id"]
    samples = mcp_on.call_ok("create_collection", history_id=history, collection_type="list", copy_elements=False,
                             element_identifiers=[{"name": f"w{n}", "src": "hda", "id": table} for n in range(3)],
                             api_key=key)["collection_id"]
    invoked = mcp_on.call_ok("invoke_workflow", workflow_id=workflow, history_id=history,
                             inputs={"samples": {"src": "hdca", "id": samples}}, api_key=key)
    waited = mcp_on.call_ok("wait_for_jobs", invocation_id=invoked["id"], timeout_seconds=110, api_key=key)
    assert waited["all_terminal"] and waited["invocation_scheduled"], waited
    progress = mcp_on.call_ok("get_invocation_details", invocation_id=invoked["id"], api_key=key)["progress"]
    assert progress["terminal"] and progress["state"] == "ok", progress
    cut = next(step for step in progress["steps"] if step["label"] == "cut")
    assert cut["jobs"] == {"ok": 3} and progress["failed_steps"] == [], progress
    assert_ran_on_the_engine(galaxy_on, list(states(waited)))


def test_the_policy_limits_jobs_and_the_audit_trail_names_them(galaxy_on, mcp_on, key, history, table):
    samples = mcp_on.call_ok("create_collection", history_id=history, collection_type="list", copy_elements=False,
                             element_identifiers=[{"name": f"p{n}", "src": "hda", "id": table} for n in range(3)],
                             api_key=key)["collection_id"]
    marker = uuid.uuid4().hex[:8]
    policy = galaxy_on.policy_file
    policy.with_suffix(".new").write_text(f"rules:\n  - name: two-{marker}\n    who: everyone\n    max_jobs_per_call: 2\n")
    os.replace(policy.with_suffix(".new"), policy)
    try:
        mapped = {"input": {"batch": True, "values": [{"src": "hdca", "id": samples}]}, "columnList": "c1",
                  "delimiter": "T"}
        text = mcp_on.call_error("run_tool", history_id=history, tool_id="Cut1", inputs=mapped, api_key=key)
        assert text.startswith(f"[FORBIDDEN] rule two-{marker}: "), text
        ran = mcp_on.call_ok("run_tool", history_id=history, tool_id="cat1", inputs={"input1": hda(table)}, api_key=key)
    finally:
        policy.unlink()
    [job] = ran["jobs"]
    assert states(finished(mcp_on, key, job_ids=[job["id"]])) == {job["id"]: "ok"}
    lines = [line for line in audit_lines(galaxy_on.audit_log) if line["tool"] == "run_tool"]
    assert lines[-2]["outcome"] == "FORBIDDEN" and lines[-2]["jobs"] == [], lines[-2]
    assert lines[-1]["outcome"] == "ok" and lines[-1]["jobs"] == [job["id"]], lines[-1]


# ---- the Slurm engine alone ----


def test_the_slurm_engine_runs_a_job_and_leaves_nothing_when_stopped(tmp_path):
    require_engine("slurm")
    engine = start_engine("slurm", tmp_path / "slurm")
    try:
        env = {**os.environ, **engine.environ}
        script = tmp_path / "job.sh"
        script.write_text("#!/bin/sh\necho ran\nsleep 299\n")
        submitted = subprocess.run(["sbatch", "-o", str(tmp_path / "job.out"), str(script)], env=env,
                                   capture_output=True, text=True, timeout=60)
        job = submitted.stdout.split()[-1]
        until(lambda: (tmp_path / "job.out").exists() and "ran" in (tmp_path / "job.out").read_text(), "the job running")
        pids = [int((engine.job_runner_log.parent / f"{name}.pid").read_text()) for name in ("slurmctld", "slurmd")]
        pids.append(int((engine.job_runner_log.parent / "munge" / "munged.pid").read_text()))
    finally:
        engine.stop()
    assert not [pid for pid in pids if pid_running(pid)]
    assert not [p for p in processes() if "sleep 299" in p]  # the job still running was cancelled
    assert f"JobId={job} " in engine.job_runner_log.read_text() and "JobState=CANCELLED" in engine.job_runner_log.read_text()
    assert engine.job_config["execution"]["default"] == "slurm"
    assert engine.describe()["job_runner_log"] == str(engine.job_runner_log)


# ---- faults (Slurm) ----


@pytest.fixture
def slurm_only(galaxy_on):
    if galaxy_on.engine != "slurm":
        pytest.skip("a Slurm fault")


def test_a_job_waits_through_a_stopped_controller_and_finishes(slurm_only, galaxy_on, mcp_on, key, history):
    """slurmctld stopped while a job runs: Galaxy cannot ask Slurm, so the job stays running (no terminal state
    made up); the controller back, the job finishes ok."""
    job_id, output_id = sleeping(mcp_on, key, history, 25)
    until(lambda: running(galaxy_on, key, job_id), "the job running")
    controller = int((galaxy_on.engine_root / "slurmctld.pid").read_text())
    conf = galaxy_on.engine_root / "slurm.conf"
    os.kill(controller, signal.SIGTERM)
    until(lambda: not pid_running(controller), "slurmctld stopping")
    assert slurm(galaxy_on, "squeue").returncode != 0  # Slurm answers nobody now
    waited = mcp_on.call_ok("wait_for_jobs", job_ids=[job_id], timeout_seconds=10, api_key=key)
    assert waited["timed_out"] and not waited["all_terminal"], waited
    assert waited["jobs"][0]["state"] == "running", waited
    replacement = subprocess.Popen([program("slurmctld"), "-D", "-f", str(conf)], stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, start_new_session=True,
                                   env={**os.environ, "SLURM_CONF": str(conf)})
    galaxy_on.replacements.append(replacement)
    assert states(finished(mcp_on, key, job_ids=[job_id])) == {job_id: "ok"}
    read = mcp_on.call_ok("peek_dataset_content", dataset_id=output_id, api_key=key)
    assert read["content"] == "done\n", read


def test_a_job_killed_at_its_time_limit_names_the_cause(slurm_only, galaxy_on, mcp_on, key, history):
    job_id, _ = sleeping(mcp_on, key, history, 300)
    until(lambda: running(galaxy_on, key, job_id), "the job running")
    external = admin_job(galaxy_on, job_id)["external_id"]
    # As if submitted with a 5 s limit (Galaxy's `job_time`): Slurm enforces it at its next check (<= 30 s).
    changed = slurm(galaxy_on, "scontrol", "update", f"JobId={external}", "TimeLimit=0:05")
    assert changed.returncode == 0, changed
    waited = finished(mcp_on, key, job_ids=[job_id])
    # Measured: Galaxy 26.1's CLI runner records it as error (exit 143) or, in another run, as ok (exit 0):
    # whichever it says, get_job_errors names the engine's cause.
    assert states(waited)[job_id] in ("error", "ok"), waited
    report = mcp_on.call_ok("get_job_errors", job_id=job_id, api_key=key)
    # Galaxy sees the job end either as Slurm's TIMEOUT (its plugin's message in info) or, when the job script
    # itself recorded the SIGTERM (exit code 143), by slurmstepd's line in the job's stderr: the cause either way.
    assert WALLTIME_MESSAGE in (report["info"] or "") or "DUE TO TIME LIMIT" in report["job_stderr"], report
    assert report["engine_cause"] == "time_limit", report
    log = (galaxy_on.engine_root / "jobs.log").read_text()
    assert f"JobId={external} " in log and "JobState=TIMEOUT" in log, log
