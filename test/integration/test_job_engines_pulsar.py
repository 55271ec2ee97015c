"""Issue 50, Pulsar: jobs staged to a local Pulsar server through Galaxy's ``pulsar_rest`` runner.

The engines' one Galaxy (test/job_engines_galaxy.py, the launcher of ``make serve JOB_RUNNER=...,pulsar``:
Pulsar beside it, stopped with it) as the user whose role routes their jobs to Pulsar, serving
test/integration/engine_tools (``engine_test_sleep``: a job as long as asked, ending with the exit code
asked). What only Pulsar shows: Galaxy's record names the runner and Pulsar's job id, Pulsar's log
(``job_runner_log``) has a line for each job it ran, inputs and outputs go through Pulsar's own staging
directory, a cancelled job's processes are gone from the Pulsar host, and what Galaxy reports when Pulsar
restarts under a running job. Skipped when Pulsar is not installed (``.ci/install-pulsar``), failed
instead where CI requires every engine (GALAXY_MCP_ANALYSIS_REQUIRE_ENGINES).
"""

import os
import re
import time
from pathlib import Path

import pytest

from conftest import (
    fetch,
    wait_for_dataset,
)
from galaxy_mcp_analysis.serve.engines.pulsar import (
    PulsarEngine,
    PulsarServer,
)
from galaxy_mcp_analysis.testing import (
    McpClient,
    rest,
)

TABLE = "3\tc\n1\ta\n2\tb\n"


@pytest.fixture(scope="module")
def galaxy_pulsar(engine_galaxy):
    return engine_galaxy("pulsar")


@pytest.fixture(scope="module")
def mcp(galaxy_pulsar):
    with McpClient(galaxy_pulsar.mcp_url) as client:
        yield client


@pytest.fixture(scope="module")
def key(galaxy_pulsar):
    return galaxy_pulsar.api_key


@pytest.fixture(scope="module")
def history(mcp, key):
    return mcp.call_ok("create_history", name="pulsar", api_key=key)["id"]


@pytest.fixture(scope="module")
def table(galaxy_pulsar, key, history):
    # The upload is a Celery task in a Galaxy-importing process: on a loaded 2-core machine 90 s and more.
    uploaded = fetch(galaxy_pulsar, key, history, {"src": "pasted", "paste_content": TABLE, "ext": "tabular"}, wait=False)
    dataset = wait_for_dataset(galaxy_pulsar, key, uploaded["id"], timeout=300)
    assert dataset["state"] == "ok", dataset
    return dataset["id"]


def server_of(galaxy) -> PulsarServer:
    return PulsarServer(galaxy.engine_root, galaxy.route["pulsar_url"])


def admin_job(galaxy, job_id: str) -> dict:
    """The job as the admins' job list shows it (runner and external id; Galaxy 26.1's single-job route
    leaves both out, even for an admin)."""
    listed = rest(galaxy.galaxy_url, "/api/jobs?view=admin_job_list&limit=1000", galaxy.admin_api_key)
    [job] = [job for job in listed if job["id"] == job_id]
    return job


def galaxy_job_number(galaxy, job_id: str) -> int:
    from conftest import id_encoding

    return id_encoding(galaxy).decode_id(job_id)


def pulsar_log_lines(galaxy, job_number: int, status: str) -> list[str]:
    pattern = re.compile(rf"Status of job \[{job_number}\] changed to \[{status}\]")
    return [line for line in Path(galaxy.route["job_runner_log"]).read_text().splitlines() if pattern.search(line)]


def until(check, what: str, timeout: float = 90):
    deadline = time.monotonic() + timeout
    while not (found := check()):
        assert time.monotonic() < deadline, f"{what} did not happen in {timeout}s"
        time.sleep(0.3)
    return found


def sleep_job(mcp, key, history, seconds: int, exit_code: int = 0) -> dict:
    return mcp.call_ok("run_tool", history_id=history, tool_id="engine_test_sleep", api_key=key,
                       inputs={"seconds": seconds, "exit_code": exit_code})


def state(mcp, key, job_id: str) -> str:
    return mcp.call_ok("wait_for_jobs", job_ids=[job_id], timeout_seconds=0, api_key=key)["jobs"][0]["state"]


def finished(mcp, key, job_id: str) -> dict:
    waited = mcp.call_ok("wait_for_jobs", job_ids=[job_id], timeout_seconds=110, api_key=key)
    assert waited["all_terminal"] and not waited["timed_out"], waited
    return waited["jobs"][0]


def test_the_server_names_pulsar_and_its_log(galaxy_pulsar):
    info, route = galaxy_pulsar.info, galaxy_pulsar.route
    assert "pulsar" in info["job_runner"].split(",") and route["role"] == "pulsar", info
    assert Path(route["job_runner_log"]) == galaxy_pulsar.engine_root / "pulsar.log", info
    assert route["pulsar_url"].startswith("http://127.0.0.1:"), info
    # The token is private: only the engine's directory (mode 700) holds it, never server.json.
    token = (galaxy_pulsar.engine_root / "engine.json").read_text()
    assert re.search(r'"token": "[0-9a-f]{32}"', token) and "token" not in str(info)
    assert (galaxy_pulsar.engine_root.stat().st_mode & 0o777) == 0o700


def test_a_tool_job_is_staged_through_pulsar_and_in_its_log(galaxy_pulsar, mcp, key, history, table):
    began = time.monotonic()
    ran = mcp.call_ok("run_tool", history_id=history, tool_id="sort1", api_key=key,
                      inputs={"input": {"src": "hda", "id": table}, "column": "1", "order": "ASC", "style": "num"})
    [job] = ran["jobs"]
    assert finished(mcp, key, job["id"])["state"] == "ok"
    elapsed = time.monotonic() - began
    read = mcp.call_ok("peek_dataset_content", dataset_id=ran["outputs"][0]["id"], api_key=key)
    assert read["content"] == "1\ta\n2\tb\n3\tc\n", read
    record = admin_job(galaxy_pulsar, job["id"])
    number = galaxy_job_number(galaxy_pulsar, job["id"])
    # Pulsar's job id is Galaxy's job number; the job ran in Pulsar's staging directory, which now is
    # cleaned (Galaxy's default cleanup), and Pulsar's log has the job's completion.
    assert record["job_runner_name"].startswith("pulsar") and record["external_id"] == str(number), record
    assert len(pulsar_log_lines(galaxy_pulsar, number, "complete")) == 1
    assert not (galaxy_pulsar.engine_root / "staging" / str(number)).exists()
    print(f"\npulsar: sort1 submitted and ok through MCP in {elapsed:.1f} s")


def test_states_on_the_way_then_a_failure_with_the_engines_exit_code(galaxy_pulsar, mcp, key, history):
    ran = sleep_job(mcp, key, history, seconds=6, exit_code=3)
    [job] = ran["jobs"]
    seen = set()

    def observed():
        seen.add(state(mcp, key, job["id"]))
        return "running" in seen or "error" in seen

    until(observed, "the job running")
    assert "running" in seen and seen <= {"new", "queued", "running"}, seen
    assert finished(mcp, key, job["id"])["state"] == "error"
    report = mcp.call_ok("get_job_errors", job_id=job["id"], api_key=key)
    assert (report["state"], report["exit_code"]) == ("error", 3), report
    assert "exiting with 3" in report["tool_stderr"], report
    number = galaxy_job_number(galaxy_pulsar, job["id"])
    assert len(pulsar_log_lines(galaxy_pulsar, number, "complete")) == 1


def test_cancel_ends_the_job_on_the_pulsar_host(galaxy_pulsar, mcp, key, history):
    ran = sleep_job(mcp, key, history, seconds=300)
    [job] = ran["jobs"]
    server = server_of(galaxy_pulsar)
    until(lambda: state(mcp, key, job["id"]) == "running", "the job running")
    assert any(process.name() == "sleep" for process in server.job_processes())
    cancelled = mcp.call_ok("cancel_job", job_id=job["id"], api_key=key)
    assert cancelled["previous_state"] == "running", cancelled
    assert finished(mcp, key, job["id"])["state"] == "deleted"
    until(lambda: not server.job_processes(), "the job's processes ending on the Pulsar host", timeout=60)
    number = galaxy_job_number(galaxy_pulsar, job["id"])
    kills = [line for line in Path(galaxy_pulsar.route["job_runner_log"]).read_text().splitlines()
             if f"Attempting to kill job with job_id {number}" in line]
    assert kills, "Pulsar's log names no kill of the job"


def test_a_pulsar_restart_under_a_running_job_fails_it_with_a_reason_and_runs_nothing_twice(
        galaxy_pulsar, mcp, key, history):
    """Pulsar stopped while a job runs: Galaxy cannot ask it, so the job stays running (its poll is retried);
    once Pulsar is back it cannot take the job up again (queued_python), says it is lost (pulsar_boot.py), and
    Galaxy fails it with its Pulsar runner's message, which get_job_errors names. No second copy runs."""
    ran = sleep_job(mcp, key, history, seconds=8)
    [job] = ran["jobs"]
    until(lambda: state(mcp, key, job["id"]) == "running", "the job running")
    engine = PulsarEngine(galaxy_pulsar.engine_root)
    engine.running().stop()
    waited = mcp.call_ok("wait_for_jobs", job_ids=[job["id"]], timeout_seconds=12, api_key=key)
    assert waited["timed_out"] and waited["jobs"][0]["state"] == "running", waited
    engine.start()  # the same port, token and staging directory; the launcher's stop ends this one
    number = galaxy_job_number(galaxy_pulsar, job["id"])
    until(lambda: pulsar_log_lines(galaxy_pulsar, number, "lost"), "Pulsar's recovery of the job", timeout=60)
    assert finished(mcp, key, job["id"])["state"] == "error"
    assert not server_of(galaxy_pulsar).job_processes()  # nothing was started a second time
    report = mcp.call_ok("get_job_errors", job_id=job["id"], api_key=key)
    assert report["engine_cause"] == "lost", report
    assert not pulsar_log_lines(galaxy_pulsar, number, "complete"), "the lost job was run to completion after all"
