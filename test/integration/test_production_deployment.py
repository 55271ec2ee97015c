"""Issue 18: the patch set on Galaxy as admins run it, started and stopped by gravity's ``galaxyctl``.

One deployment (``galaxy_mcp_analysis.testing.gravity``): gunicorn with 2 workers and the
patch set's worker class (the galaxy.yml's only patch-set line), 2 job handler processes
(``db-skip-locked``), a Celery worker and beat on a throw-away Redis, PostgreSQL. On it, through
/api/mcp with the official client:

- the field report's analysis (test_field_report_replay.replay), one HTTP connection per request
  so consecutive calls land on either gunicorn worker (the access log names the worker's PID);
- every tool job runs in a handler process, every upload in the Celery worker, and neither of
  those processes loads the patch set;
- wait_for_jobs ends as soon as a job another process runs is finished;
- one gunicorn worker SIGKILLed by PID while a wait and a series of create_collection calls run
  on it: the master replaces it, the calls in flight fail at the client (no hang), nothing is
  half-created, nothing is lost, and the next calls succeed;
- ``galaxyctl restart`` (every process new) keeps users, keys, datasets, collections and pages;
- ``galaxyctl stop`` leaves no process of the deployment (checked by PID and by session);
- after the restart, the admin's ``galaxy-mcp-analysis selftest`` passes as a new user and leaves nothing;
- sign-in (OAuth 2.1) is on (so every API key goes in the x-api-key header): a token issued by one worker
  works on the other, is refreshed (rotated) there, and works after the restart; a revocation on one
  worker holds on the other at once (production_sign_in.py).

PostgreSQL pass only (GALAXY_MCP_ANALYSIS_TEST_DATABASE=postgresql, as CI's second pass); the
Redis server comes from .ci/install-redis. Figures are printed and kept as junit properties.
"""

import http.server
import os
import json
import re
import signal
import threading
import time
from datetime import (
    datetime,
    timezone,
)

import pytest

from conftest import TEST_DATABASE
from galaxy_mcp_analysis.testing import (
    create_user,
    error_text,
    McpClient,
    rest,
)
from galaxy_mcp_analysis.testing.audit import (
    audit_lines,
    complete,
)
from galaxy_mcp_analysis.testing.gravity import GravityGalaxy
from galaxy_mcp_analysis.testing.redis_server import RedisServer
import production_sign_in
from replay_transcript import Transcript
from test_field_report_replay import replay
from test_gunicorn import MCP_ACCESS
from test_restart import Trickle as RestartTrickle
from test_selftest import check_selftest_passes_and_cleans_up

pytestmark = [
    pytest.mark.skipif(
        TEST_DATABASE != "postgresql",
        reason="the production-shaped Galaxy (gravity, job handlers, Celery on Redis) runs in the PostgreSQL "
        "pass only: GALAXY_MCP_ANALYSIS_TEST_DATABASE=postgresql (CI's second pass)",
    ),
    # One deployment serves every test: two starts of five Galaxy processes, the replay, a kill, a stop.
    pytest.mark.timeout(3600),
]

#: How long a call in flight on a killed worker may take to fail before it counts as a hang.
IN_FLIGHT_FAIL_BOUND_SECONDS = 60
ACTIVE_LINE = re.compile(r"galaxy-mcp-analysis \S+ active on Galaxy")
#: Celery task success lines (celery's worker log at INFO).
CELERY_SUCCEEDED = re.compile(r"Task (galaxy\.[\w.]+)\[[^\]]+\] succeeded")
UPLOAD_TOOL = "__DATA_FETCH__"
#: The test user's login (testing.create_user's password), for the sign-in through Galaxy's login.
PERSON = {"email": "production@example.org", "password": "password-production"}


class Trickle(RestartTrickle):
    """test_restart's never-ending download, with an event of its own to end it (Trickle.stop)."""

    stop = threading.Event()


class AccessLog:
    """The MCP requests in gunicorn's log (uvicorn's access lines name the worker's PID)."""

    def __init__(self, galaxy: GravityGalaxy):
        self.galaxy = galaxy
        self.mark()

    def mark(self) -> None:
        self.offset = len(self.galaxy.log_text("gunicorn"))

    def since_mark(self) -> list[tuple[int, int]]:
        return [(int(pid), int(status)) for pid, status in MCP_ACCESS.findall(self.galaxy.log_text("gunicorn")[self.offset:])]

    def worker_of_next_call(self, call) -> int:
        """Run ``call`` and return the PID of the worker that answered its request (the log
        reaches the file through supervisord's pipe: wait for the line, bounded)."""
        self.mark()
        call()
        deadline = time.monotonic() + 30
        while not (served := self.since_mark()):
            assert time.monotonic() < deadline, "no access line for the call"
            time.sleep(0.1)
        return served[-1][0]


def admin_jobs(galaxy: GravityGalaxy) -> list[dict]:
    """Every job with the handler that ran it (Galaxy's admin job list)."""
    return rest(galaxy.galaxy_url, "/api/jobs?view=admin_job_list&limit=1000", galaxy.admin_api_key)


def history_state(client: McpClient, history_id: str, api_key: str) -> dict:
    """What must survive a killed worker and a restart: every item of a history, and each dataset's bytes."""
    contents = client.call_ok("get_history_contents", history_id=history_id, limit=500, api_key=api_key)["contents"]
    items = sorted((item["hid"], item["name"], item["history_content_type"], item.get("state")) for item in contents)
    data = {}
    for item in contents:
        if item["history_content_type"] == "dataset" and item.get("state") == "ok":
            read = client.call_ok("peek_dataset_content", dataset_id=item["id"], api_key=api_key)
            data[item["hid"]] = read["content"]
    return {"items": items, "data": data}


@pytest.fixture(scope="module")
def deployment(tmp_path_factory, postgres, record_testsuite_property):
    began = time.monotonic()
    observed: dict = {"figures": {}}
    figures = observed["figures"]
    # The machine's 1-minute load average at start and end: the wall times scale with it.
    figures["load_average_at_start"] = round(os.getloadavg()[0], 2)
    trickle = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Trickle)
    trickle.daemon_threads = True
    threading.Thread(target=trickle.serve_forever, name="trickle", daemon=True).start()
    redis = RedisServer().start()
    production_dir = tmp_path_factory.mktemp("production")
    audit_log = production_dir / "audit.jsonl"
    galaxy = GravityGalaxy(production_dir / "galaxy", database_url=postgres.create_database("production"),
                           broker_url=redis.url, env={"GALAXY_MCP_ANALYSIS_AUDIT_LOG": str(audit_log), "GALAXY_MCP_ANALYSIS_OAUTH": "true"})
    observed["galaxy"] = galaxy
    try:
        started = time.monotonic()
        galaxy.start()
        figures["start_seconds"] = round(time.monotonic() - started, 1)
        observed["programs"] = {name: info["statename"] for name, info in galaxy.programs().items()}
        observed["workers_at_start"] = galaxy.gunicorn_workers()
        user_key = create_user(galaxy.galaxy_url, galaxy.admin_api_key, "production")
        observed["user_key"] = user_key
        observed["user_id"] = rest(galaxy.galaxy_url, "/api/users/current", user_key)["id"]
        access = AccessLog(galaxy)

        _replay_across_workers(galaxy, access, user_key, observed)
        sign_in_began = time.monotonic()
        observed["sign_in"] = production_sign_in.across_workers(galaxy, PERSON)
        figures["sign_in_seconds"] = round(time.monotonic() - sign_in_began, 1)
        _wait_for_a_job_of_another_process(galaxy, user_key, observed)
        kill_began = time.monotonic()
        _kill_a_worker_mid_run(galaxy, access, user_key, trickle, observed)
        figures["kill_phase_seconds"] = round(time.monotonic() - kill_began, 1)
        _restart(galaxy, user_key, observed)
        observed["logs"] = {name: galaxy.log_text(name) for name in galaxy.program_names}
        observed["jobs"] = admin_jobs(galaxy)
        figures["handlers_seen"] = len({job["handler"] for job in observed["jobs"] if job["tool_id"] != UPLOAD_TOOL})
        # Last: its cancelled rerun never reaches a handler, so it stays out of the job list judged above.
        observed["audited_before_selftest"] = len(audit_lines(audit_log))
        _selftest(galaxy, observed)
    finally:
        Trickle.stop.set()
        stop_began = time.monotonic()
        observed["leftovers"] = galaxy.stop()
        figures["stop_seconds"] = round(time.monotonic() - stop_began, 1)
        observed["galaxyctl_calls"] = galaxy.galaxyctl_calls
        redis.stop()
        trickle.shutdown()
        trickle.server_close()
    observed["audited"] = audit_lines(audit_log)
    figures["wall_seconds"] = round(time.monotonic() - began, 1)
    figures["load_average_at_end"] = round(os.getloadavg()[0], 2)
    for name, value in figures.items():
        record_testsuite_property(f"production_{name}", value)
    kill = observed.get("kill", {})
    print(f"\nproduction deployment figures: {figures}\ngalaxyctl calls: {galaxy.galaxyctl_calls}\n"
          f"killed worker: in-flight wait got {str(kill.get('wait'))[:300]}; create_collection cut off: "
          f"{str(kill.get('create_failure'))[:300]}; {len(kill.get('created', []))} created before, "
          f"collections there: {sorted(kill.get('collections', {}))}")
    return observed


def _replay_across_workers(galaxy, access, user_key, observed):
    """The field report's analysis, every request on a new connection (either worker may answer)."""
    access.mark()
    began = time.monotonic()
    client = McpClient(galaxy.mcp_url, headers={"connection": "close", "x-api-key": user_key})
    try:
        transcript = Transcript(client, user_key)
        replay(transcript)
    finally:
        client.close()
    served = access.since_mark()
    pids = [pid for pid, _ in served]
    observed["replay"] = {
        "calls": len(transcript.calls),
        "served": served,
        "by_worker": {pid: pids.count(pid) for pid in sorted(set(pids))},
        "switches": sum(1 for a, b in zip(pids, pids[1:]) if a != b),
        "history_id": next(call.response["id"] for call in transcript.calls if call.tool == "create_history"),
        "page_id": next(call.response["page_id"] for call in transcript.calls if call.tool == "create_page"),
    }
    figures = observed["figures"]
    figures["replay_mcp_calls"] = len(transcript.calls)
    figures["replay_http_requests"] = len(served)
    figures["replay_wall_seconds"] = round(time.monotonic() - began, 1)
    figures["workers_seen"] = len(observed["replay"]["by_worker"])
    figures["worker_switches"] = observed["replay"]["switches"]


def _wait_for_a_job_of_another_process(galaxy, user_key, observed):
    """A tool job queued and at once waited for: the handler process runs it, the web worker's wait sees it end."""
    with McpClient(galaxy.mcp_url, headers={"x-api-key": user_key}) as client:
        history_id = client.call_ok("create_history", name="wait across processes", api_key=user_key)["id"]
        pasted = client.call_ok("create_dataset_from_text", history_id=history_id, content="b\na\n",
                                file_type="txt", api_key=user_key)
        client.call_ok("wait_for_jobs", dataset_ids=[pasted["dataset_id"]], timeout_seconds=110, api_key=user_key)
        run = client.call_ok("run_tool", history_id=history_id, tool_id="cat1", api_key=user_key,
                             inputs={"input1": {"src": "hda", "id": pasted["dataset_id"]}})
        job_id = run["jobs"][0]["id"]
        waited = client.call_ok("wait_for_jobs", job_ids=[job_id], timeout_seconds=110, api_key=user_key)
        returned = datetime.now(timezone.utc).replace(tzinfo=None)
        details = client.call_ok("get_job_status", job_id=job_id, api_key=user_key)["job"]
    finished = datetime.fromisoformat(details["update_time"])
    observed["wait"] = {"waited": waited, "job_id": job_id}
    observed["figures"]["wait_seconds"] = waited["waited_seconds"]
    # From the job's last update (written by the handler process) to wait_for_jobs' return in the web worker.
    observed["figures"]["wait_lag_seconds"] = round((returned - finished).total_seconds(), 2)


def _bind(galaxy, access, headers, want_pid=None, tries=40):
    """A new client whose keep-alive connection is served by ``want_pid`` (any worker when None)."""
    for _ in range(tries):
        client = McpClient(galaxy.mcp_url, headers=headers)
        pid = access.worker_of_next_call(client.list_tools)
        if want_pid is None or pid == want_pid:
            return client, pid
        client.close()
    raise AssertionError(f"no new connection reached worker {want_pid} in {tries} tries")


def _kill_a_worker_mid_run(galaxy, access, user_key, trickle, observed):
    kill: dict = {}
    observed["kill"] = kill
    url = f"http://127.0.0.1:{trickle.server_address[1]}/slow.txt"
    with McpClient(galaxy.mcp_url, headers={"x-api-key": user_key}) as setup:
        history_id = setup.call_ok("create_history", name="worker killed mid-run", api_key=user_key)["id"]
        pasted = [setup.call_ok("create_dataset_from_text", history_id=history_id, content=f"element {i}\n",
                                name=f"element {i}", file_type="txt", api_key=user_key)["dataset_id"]
                  for i in range(2)]
        setup.call_ok("wait_for_jobs", dataset_ids=pasted, timeout_seconds=110, api_key=user_key)
        stalled = setup.call_ok("upload_file_from_url", history_id=history_id, url=url, api_key=user_key)
        stalled_job = stalled["jobs"][0]["id"]
        kill["before"] = history_state(setup, observed["replay"]["history_id"], user_key)
        kill["page_before"] = setup.call_ok("get_page", page_id=observed["replay"]["page_id"], api_key=user_key)
    elements = [{"name": f"e{i}", "src": "hda", "id": dataset_id} for i, dataset_id in enumerate(pasted)]

    waiter, victim = _bind(galaxy, access, {"x-api-key": user_key})
    creator, _ = _bind(galaxy, access, {"x-api-key": user_key}, want_pid=victim)
    kill["victim"] = victim
    outcome: dict = {"created": []}

    def wait_on_victim():
        outcome["wait_started"] = time.monotonic()
        try:
            result = waiter.call("wait_for_jobs", {"job_ids": [stalled_job], "timeout_seconds": 100,
                                                   "api_key": user_key}, timeout=IN_FLIGHT_FAIL_BOUND_SECONDS + 120)
            outcome["wait"] = ("error", error_text(result)) if result.is_error else ("ok", result.structured_content)
        except BaseException as e:  # noqa: BLE001  (what the client gets is the point)
            outcome["wait"] = ("exception", f"{type(e).__name__}: {e}")
        outcome["wait_ended"] = time.monotonic()

    def create_on_victim():
        for i in range(500):
            name = f"kill-{i}"
            outcome["in_flight"] = name
            try:
                result = creator.call("create_collection", {"history_id": history_id, "collection_type": "list",
                                                            "name": name, "element_identifiers": elements,
                                                            "api_key": user_key},
                                      timeout=IN_FLIGHT_FAIL_BOUND_SECONDS + 120)
            except BaseException as e:  # noqa: BLE001
                outcome["create_failure"] = (name, f"{type(e).__name__}: {e}")
                break
            if result.is_error:
                outcome["create_failure"] = (name, error_text(result))
                break
            outcome["created"].append(name)
        outcome["create_ended"] = time.monotonic()

    threads = [threading.Thread(target=wait_on_victim, daemon=True),
               threading.Thread(target=create_on_victim, daemon=True)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 120
    while (len(outcome["created"]) < 3 or "wait_started" not in outcome) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1)  # the wait is now sleeping inside the victim (it polls every 2 s at most)
    kill["wait_in_flight_at_kill"] = threads[0].is_alive()
    kill["created_before_kill"] = len(outcome["created"])
    killed_at = time.monotonic()
    os.kill(victim, signal.SIGKILL)
    for thread in threads:
        thread.join(IN_FLIGHT_FAIL_BOUND_SECONDS + 130)
    kill["hung"] = [thread.is_alive() for thread in threads]
    kill["wait"] = outcome.get("wait")
    kill["wait_failed_after"] = round(outcome["wait_ended"] - killed_at, 2) if "wait_ended" in outcome else None
    kill["create_failure"] = outcome.get("create_failure")
    kill["created"] = list(outcome["created"])
    kill["create_failed_after"] = (round(outcome["create_ended"] - killed_at, 2)
                                   if "create_ended" in outcome else None)
    for client in (waiter, creator):
        client.close()

    deadline = time.monotonic() + 300
    while True:
        workers = galaxy.gunicorn_workers()
        if len(workers) == galaxy.web_workers and victim not in workers:
            break
        assert time.monotonic() < deadline, f"gunicorn did not replace worker {victim}: {workers}"
        time.sleep(0.5)
    kill["replaced_by"] = sorted(set(workers) - set(observed["workers_at_start"]))
    kill["replaced_after"] = round(time.monotonic() - killed_at, 1)
    galaxy.wait_until_ready()
    Trickle.stop.set()  # the stalled upload ends (short of its promised length)

    with McpClient(galaxy.mcp_url, headers={"connection": "close", "x-api-key": user_key}) as after:
        contents = after.call_ok("get_history_contents", history_id=history_id, limit=500,
                                 api_key=user_key)["contents"]
        kill["collections"] = {
            item["name"]: after.call_ok("get_collection_details", collection_id=item["id"],
                                        api_key=user_key)["collection"]
            for item in contents if item["history_content_type"] == "dataset_collection"
        }
        failed_name = (kill["create_failure"] or ("kill-retry", ""))[0]
        kill["retry"] = after.call_ok("create_collection", history_id=history_id, collection_type="list",
                                      name=f"{failed_name} again", element_identifiers=elements, api_key=user_key)
        kill["after"] = history_state(after, observed["replay"]["history_id"], user_key)
        kill["page_after"] = after.call_ok("get_page", page_id=observed["replay"]["page_id"], api_key=user_key)
        kill["calls_after"] = [after.call_ok("connect", api_key=user_key)["connected"] for _ in range(6)]
    observed["figures"]["killed_worker_replaced_seconds"] = kill["replaced_after"]
    observed["figures"]["in_flight_wait_failed_seconds"] = kill["wait_failed_after"]


def _selftest(galaxy, observed):
    """The admin's command, as test_selftest.py runs it on make serve's Galaxy; judged by its test below."""
    try:
        observed["selftest"] = check_selftest_passes_and_cleans_up(galaxy.galaxy_url, galaxy.admin_api_key, "selftest")
        observed["figures"]["selftest_seconds"] = observed["selftest"]["seconds"]
    except Exception as failure:  # recorded, so that the deployment's other tests are still judged
        observed["selftest"] = failure


def _restart(galaxy, user_key, observed):
    restart: dict = {}
    observed["restart"] = restart
    restart["pids_before"] = {name: info["pid"] for name, info in galaxy.programs().items()}
    restart["access_lines_before"] = len(ACTIVE_LINE.findall(galaxy.log_text("gunicorn")))
    began = time.monotonic()
    galaxy.restart()
    observed["figures"]["restart_seconds"] = round(time.monotonic() - began, 1)
    restart["pids_after"] = {name: info["pid"] for name, info in galaxy.programs().items()}
    restart["states_after"] = {name: info["statename"] for name, info in galaxy.programs().items()}
    restart["sign_in"] = production_sign_in.after_restart(galaxy, observed["sign_in"]["kept"])
    with McpClient(galaxy.mcp_url, headers={"connection": "close", "x-api-key": user_key}) as client:
        restart["user"] = client.call_ok("connect", api_key=user_key)["user"]["username"]
        restart["state"] = history_state(client, observed["replay"]["history_id"], user_key)
        restart["page"] = client.call_ok("get_page", page_id=observed["replay"]["page_id"], api_key=user_key)
        history_id = client.call_ok("create_history", name="after restart", api_key=user_key)["id"]
        pasted = client.call_ok("create_dataset_from_text", history_id=history_id, content="z\ny\n",
                                file_type="txt", api_key=user_key)
        run = client.call_ok("run_tool", history_id=history_id, tool_id="cat1", api_key=user_key,
                             inputs={"input1": {"src": "hda", "id": pasted["dataset_id"]}})
        restart["wait"] = client.call_ok("wait_for_jobs", job_ids=[run["jobs"][0]["id"]], timeout_seconds=110,
                                         api_key=user_key)
        output_id = run["outputs"][0]["id"] if run.get("outputs") else None
        restart["output"] = (client.call_ok("peek_dataset_content", dataset_id=output_id, api_key=user_key)["content"]
                             if output_id else None)


# ---- what the deployment showed ----


def test_galaxyctl_start_runs_every_process_of_the_shape(deployment):
    galaxy = deployment["galaxy"]
    assert deployment["programs"] == {name: "RUNNING" for name in galaxy.program_names}
    assert len(deployment["workers_at_start"]) == 2
    assert deployment["galaxyctl_calls"][0][:2] == ("start", 0)


def test_only_the_web_workers_load_the_patch_set(deployment):
    logs = deployment["logs"]
    # gunicorn's master activates the patch set once per start (before --preload builds the app).
    assert len(ACTIVE_LINE.findall(logs["gunicorn"])) == 2, "one line per start: galaxyctl start and restart"
    for name in ("celery", "celery-beat", "handler_0", "handler_1"):
        assert "galaxy-mcp-analysis" not in logs[name], name
    # ... and yet those processes did their part: uploads in the Celery worker, tools in the handlers.
    tasks = set(CELERY_SUCCEEDED.findall(logs["celery"]))
    assert {"galaxy.fetch_data", "galaxy.set_job_metadata"} <= tasks, sorted(tasks)


def test_the_field_report_flow_runs_across_both_workers(deployment):
    replay = deployment["replay"]
    assert replay["calls"] >= 50  # the whole replay ran (its own asserts passed)
    assert len(replay["by_worker"]) == 2, replay["by_worker"]
    assert set(replay["by_worker"]) == set(deployment["workers_at_start"])
    assert replay["switches"] >= 1
    assert {status for _, status in replay["served"]} <= {200, 202}


def test_tool_jobs_run_in_the_separate_handler_processes(deployment):
    galaxy = deployment["galaxy"]
    tool_jobs = [job for job in deployment["jobs"] if job["tool_id"] != UPLOAD_TOOL]
    assert len(tool_jobs) >= 13  # the replay's 12 mapped jobs and the cat1 of the wait test
    handlers = {job["handler"] for job in tool_jobs}
    assert handlers <= set(galaxy.handler_names), handlers
    assert all(job["state"] == "ok" for job in tool_jobs), [(job["tool_id"], job["state"]) for job in tool_jobs]
    for handler in handlers:
        assert f"[pN:{handler}," in deployment["logs"][handler]


def test_wait_for_jobs_ends_when_a_handler_finishes_the_job(deployment):
    waited = deployment["wait"]["waited"]
    assert (waited["all_terminal"], waited["timed_out"]) == (True, False)
    assert [job["state"] for job in waited["jobs"]] == ["ok"]
    handler = next(job["handler"] for job in deployment["jobs"] if job["id"] == deployment["wait"]["job_id"])
    assert handler in deployment["galaxy"].handler_names
    # The wait returned after the handler's last write to the job (a wait that returned on a stale or guessed
    # state would come back before it), and within its 110 s timeout (how soon after is a figure, not a bound).
    lag = deployment["figures"]["wait_lag_seconds"]
    assert 0 <= lag < 110, lag


def test_a_killed_worker_is_replaced_and_later_calls_succeed(deployment):
    kill = deployment["kill"]
    assert len(kill["replaced_by"]) == 1 and kill["victim"] not in kill["replaced_by"]
    assert kill["calls_after"] == [True] * 6
    assert kill["retry"]["element_count"] == 2


def test_calls_in_flight_on_the_killed_worker_fail_cleanly(deployment):
    kill = deployment["kill"]
    assert kill["wait_in_flight_at_kill"] is True
    assert kill["hung"] == [False, False]
    kind, text = kill["wait"]
    assert kind in ("exception", "error"), kill["wait"]
    assert "TimeoutError" not in text, text
    assert kill["wait_failed_after"] < IN_FLIGHT_FAIL_BOUND_SECONDS, kill
    assert kill["create_failure"] is not None and kill["created_before_kill"] >= 3
    assert "TimeoutError" not in kill["create_failure"][1]


def test_no_half_created_object_and_no_data_lost(deployment):
    kill = deployment["kill"]
    created, failed = kill["created"], kill["create_failure"][0]
    collections = kill["collections"]
    # Every collection there is whole; each successful call made one; the call cut off made one or none.
    assert all((c["element_count"], c["populated_state"]) == (2, "ok") for c in collections.values()), collections
    assert set(created) <= set(collections) <= set(created) | {failed}
    assert kill["after"] == kill["before"]
    assert kill["page_after"]["content_editor"] == kill["page_before"]["content_editor"]


def test_galaxyctl_restart_keeps_everything(deployment):
    restart, kill = deployment["restart"], deployment["kill"]
    assert restart["states_after"] == {name: "RUNNING" for name in deployment["galaxy"].program_names}
    assert all(restart["pids_after"][name] != pid for name, pid in restart["pids_before"].items())
    assert restart["user"] == "production"
    assert restart["state"] == kill["before"]
    assert restart["page"]["content_editor"] == kill["page_before"]["content_editor"]
    assert restart["wait"]["state_counts"] == {"ok": 1}
    assert restart["output"] == "z\ny\n"


def test_every_worker_wrote_complete_audit_lines_naming_the_user(deployment):
    """Workers (one killed mid-call, all restarted) share one audit file: every line whole, from several workers."""
    audited = deployment["audited"]
    assert audited and all(complete(line) for line in audited)
    assert len({line["pid"] for line in audited}) >= 2
    # Every call before the self-test was made as the one test user; the self-test's as its own new user.
    before = deployment["audited_before_selftest"]
    assert {line["user_id"] for line in audited[:before]} - {None} == {deployment["user_id"]}
    selftest_users = {line["user_id"] for line in audited[before:]} - {None}
    assert len(selftest_users) == 1 and deployment["user_id"] not in selftest_users, selftest_users
    assert deployment["user_key"] not in json.dumps(audited)
    assert {"create_dataset_from_text", "create_collection", "wait_for_jobs"} <= {line["tool"] for line in audited}


def test_galaxyctl_stop_leaves_no_process(deployment):
    assert deployment["galaxyctl_calls"][-1][:2] == ("stop", 0)
    assert deployment["leftovers"] == []
    assert len(deployment["galaxy"].seen) >= 8  # supervisord, 5 programs, 2 workers (and their replacements)


def test_the_admins_selftest_passes_and_leaves_nothing(deployment):
    outcome = deployment.get("selftest")
    assert isinstance(outcome, dict), f"selftest: {str(outcome)[-3000:]}"
    assert outcome["steps"] >= 30


def test_a_token_issued_on_one_worker_is_used_and_refreshed_on_the_other(deployment):
    seen = deployment["sign_in"]
    first, second = seen["workers"]
    assert first != second and {first, second} == set(deployment["workers_at_start"])
    assert seen["issued_on"] == first and seen["used_on"] == (second, 200)
    assert seen["refreshed_on"] == second and seen["rotated"][0] == 200 and seen["rotation"] == (True, True)
    assert seen["rotated_used_on"] == (first, 200)


def test_a_revocation_on_one_worker_holds_on_the_other_at_once(deployment):
    seen = deployment["sign_in"]
    first, second = seen["workers"]
    assert seen["before_revocation"] == (second, 200)
    assert (seen["revoked_on"], seen["revocation_status"]) == (first, 200)
    assert seen["after_revocation"] == (second, 401)


def test_the_access_and_refresh_token_outlive_galaxyctl_restart(deployment):
    after, kept = deployment["restart"]["sign_in"], deployment["sign_in"]["kept"]
    assert not set(after["workers"]) & set(deployment["workers_at_start"])  # new workers answered
    assert after["access"][1] == 200 and after["access"][0] in after["workers"]
    status, rotated = after["refresh"]
    assert status == 200 and rotated["refresh_token"] != kept["refresh_token"], rotated
    assert after["refreshed_access"][1] == 200
    logged = json.dumps(deployment["audited"]) + "".join(deployment["logs"].values())
    assert kept["access_token"] not in logged and kept["refresh_token"] not in logged
