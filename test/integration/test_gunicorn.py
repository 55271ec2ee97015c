"""The production switch: gunicorn started the way gravity starts it, plus the one extra_args line.

Also issue 9's multi-worker promise: two gunicorn workers behind one port serve the
tools, and no MCP state lives in a worker (Galaxy's MCP app is stateless HTTP).
"""

import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from contextlib import contextmanager

import psutil
import pytest

from galaxy_mcp_analysis.serve import galaxy_config
from galaxy_mcp_analysis.activation.patches import PATCHES
from galaxy_mcp_analysis.testing import (
    create_user,
    free_port,
    McpClient,
)
from galaxy_mcp_analysis.testing.audit import (
    audit_lines,
    complete,
)

ADMIN_KEY = "k" * 32


def gravity_command(port: int, preload: bool, workers: int = 1) -> list[str]:
    """gravity's gunicorn command line for Galaxy 26.1, then the admin's extra_args."""
    gunicorn = [sys.executable, "-m", "gunicorn", "galaxy.webapps.galaxy.fast_factory:factory()"]
    gravity = ["--timeout", "600", "-k", "galaxy.webapps.galaxy.workers.Worker", "-b", f"127.0.0.1:{port}",
               f"--workers={workers}", "--config", "python:galaxy.web_stack.gunicorn_config"]
    gravity += ["--preload"] if preload else []
    extra_args = ["--worker-class", "galaxy_mcp_analysis.worker.Worker"]  # the documented galaxy.yml line
    return gunicorn + gravity + extra_args


def control_queue(tmp_path) -> str:
    """Galaxy's internal control queue (kombu's SQLAlchemy transport) on a sqlite file of its own, as Galaxy's
    default has it, its tables made before any worker starts. Each worker creates them at its first use, after
    the fork; two workers on a fresh file raced to (rehearsal of 2026-11-27: "table kombu_message already
    exists", a logged traceback, then kombu reconnected), a Galaxy start-up race, not one of a tool call."""
    from kombu import Connection

    url = f"sqlalchemy+sqlite:///{tmp_path / 'control.sqlite'}?isolation_level=IMMEDIATE"
    with Connection(url) as connection:
        connection.default_channel.session  # noqa: B018 (kombu's transport creates its tables on first use)
    return url


@contextmanager
def gunicorn_galaxy(tmp_path, database_url, *, preload: bool, workers: int = 1, env: dict | None = None):
    """Galaxy under gunicorn on a free loopback port (``env``: extra variables); yields (port, process, log path)."""
    port = free_port()
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    config = galaxy_config.write(data_dir, galaxy_url=f"http://127.0.0.1:{port}", id_secret="s" * 32,
                                 admin_api_key=ADMIN_KEY, database_url=database_url)
    log_path = tmp_path / "gunicorn.log"
    env = {**os.environ, "GALAXY_CONFIG_FILE": str(config), **(env or {})}
    if workers > 1:
        env["GALAXY_CONFIG_OVERRIDE_AMQP_INTERNAL_CONNECTION"] = control_queue(tmp_path)
    with open(log_path, "wb") as log:
        process = subprocess.Popen(gravity_command(port, preload, workers), stdout=log, stderr=subprocess.STDOUT,
                                   env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while True:
            assert process.poll() is None, log_path.read_text()
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/version", timeout=5)
                break
            except OSError:
                assert time.monotonic() < deadline, log_path.read_text()[-3000:]
                time.sleep(0.5)
        yield port, process, log_path
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.mark.parametrize("preload", [True, False], ids=["preload", "no-preload"])
def test_gunicorn_worker_class_switches_the_patch_set_on(tmp_path, new_database_url, preload):
    with gunicorn_galaxy(tmp_path, new_database_url(), preload=preload) as (port, _, log_path):
        with McpClient(f"http://127.0.0.1:{port}/api/mcp") as client:
            names = {tool.name for tool in client.list_tools()}
        assert {"peek_dataset_content", "validate_page_content", "connect"} <= names
        startup = [line for line in log_path.read_text().splitlines() if "galaxy-mcp-analysis" in line]
        assert startup and startup[0].endswith(
            "patches applied: " + ", ".join(patch.id for patch in PATCHES)
        ), startup


CLIENTS = 12
#: Calls the hopping session makes at most while waiting to be answered by both workers.
HOPPING_CALLS_AT_MOST = 200
#: Galaxy's log format names the serving process: "[pN:main.1,p:<pid>,...] <client> - "POST /api/mcp ..." <status>".
MCP_ACCESS = re.compile(r"\[pN:[^,]*,p:(\d+),.*\] \S+ - \"POST /api/mcp/? HTTP/1.1\" (\d+)")


def mcp_requests_by_worker(log_text: str) -> dict[int, list[int]]:
    """Worker PID -> statuses of the MCP requests it answered (from uvicorn's access log)."""
    served: dict[int, list[int]] = {}
    for pid, status in MCP_ACCESS.findall(log_text):
        served.setdefault(int(pid), []).append(int(status))
    return served


@pytest.fixture(scope="module")
def two_workers(tmp_path_factory, new_database_url):
    tmp_path = tmp_path_factory.mktemp("two-workers")
    audit_log = tmp_path / "audit.jsonl"
    with gunicorn_galaxy(tmp_path, new_database_url(), preload=True, workers=2,
                         env={"GALAXY_MCP_ANALYSIS_AUDIT_LOG": str(audit_log)}) as (port, process, log_path):
        url = f"http://127.0.0.1:{port}/api/mcp"
        user_key = create_user(f"http://127.0.0.1:{port}", ADMIN_KEY, "workers")
        observed = {"worker_pids": sorted(child.pid for child in psutil.Process(process.pid).children())}
        startup_log_length = len(log_path.read_text(errors="replace"))
        clients = []
        try:
            # Each client is a new SDK session on its own keep-alive connection; the kernel hands
            # each new connection to whichever worker accepts first. Open clients until both
            # workers have answered some (bounded), so both are seen serving tool calls.
            for _ in range(40):
                client = McpClient(url)
                clients.append(client)
                client.call_ok("connect", api_key=user_key)
                served = mcp_requests_by_worker(log_path.read_text(errors="replace")[startup_log_length:])
                if len(clients) >= CLIENTS and len(served) >= 2:
                    break
            observed["clients"] = len(clients)
            # Client i makes items; client i+1 (often on the other worker) reads and edits them.
            made = []
            for i, client in enumerate(clients):
                history = client.call_ok("create_history", name=f"worker test {i}", api_key=user_key)
                page = client.call_ok("create_page", history_id=history["id"], content=f"# Made by client {i}\n",
                                      api_key=user_key)
                pasted = client.call_ok("create_dataset_from_text", history_id=history["id"],
                                        content=f"client\t{i}\n", file_type="tabular", api_key=user_key)
                collection = client.call_ok("create_collection", history_id=history["id"], collection_type="list",
                                            element_identifiers=[{"name": "only", "src": "hda",
                                                                  "id": pasted["dataset_id"]}], api_key=user_key)
                made.append((history["id"], page["page_id"], collection["collection_id"]))
            crossed = []
            for i, (history_id, page_id, collection_id) in enumerate(made):
                reader = clients[(i + 1) % len(clients)]
                reader.call_ok("update_page", page_id=page_id, content=f"# Made by client {i}\n\nEdited.\n",
                               api_key=user_key)
                crossed.append({
                    "history": reader.call_ok("get_history_details", history_id=history_id,
                                              api_key=user_key)["history"]["name"],
                    "page": reader.call_ok("get_page", page_id=page_id, api_key=user_key)["content_editor"],
                    "revisions": len(reader.call_ok("list_page_revisions", page_id=page_id,
                                                    api_key=user_key)["revisions"]),
                    "collection": reader.call_ok("get_collection_details", collection_id=collection_id,
                                                 api_key=user_key)["collection"]["element_count"],
                })
            observed["crossed"] = crossed
        finally:
            for client in clients:
                client.close()
        # One session whose every request is a new connection: its calls land on either worker. It is the
        # only client now, so the access log from here on is its own; it calls until both workers have
        # answered it (bounded), and every answer must be right.
        hopping_log_start = len(log_path.read_text(errors="replace"))
        observed["hopping"] = []
        with McpClient(url, headers={"connection": "close"}) as hopping:
            for i in range(HOPPING_CALLS_AT_MOST):
                observed["hopping"].append(
                    hopping.call_ok("get_page", page_id=made[i % len(made)][1], api_key=user_key)["content_editor"])
                observed["hopping_served"] = mcp_requests_by_worker(
                    log_path.read_text(errors="replace")[hopping_log_start:])
                if len(observed["hopping"]) >= 20 and len(observed["hopping_served"]) >= 2:
                    break
        observed["log"] = log_path.read_text(errors="replace")[startup_log_length:]
        observed["served"] = mcp_requests_by_worker(observed["log"])
        observed["audited"] = audit_lines(audit_log)
        print(f"\nmulti-worker figures: clients={len(clients)} requests per worker="
              f"{ {pid: len(statuses) for pid, statuses in observed['served'].items()} }")
    return observed


def test_two_workers_both_serve_tool_calls(two_workers):
    assert len(two_workers["worker_pids"]) == 2
    served = two_workers["served"]
    assert sorted(served) == two_workers["worker_pids"], served.keys()
    assert all(len(statuses) >= 5 for statuses in served.values()), served
    # 200: a request's result; 202: an accepted notification (notifications/initialized).
    assert {status for statuses in served.values() for status in statuses} <= {200, 202}


def test_items_made_on_one_session_read_and_edit_on_another(two_workers):
    for i, seen in enumerate(two_workers["crossed"]):
        assert seen == {"history": f"worker test {i}", "page": f"# Made by client {i}\n\nEdited.\n",
                        "revisions": 2, "collection": 1}


def test_a_session_keeps_working_when_its_requests_change_worker(two_workers):
    made = two_workers["crossed"]
    answers = two_workers["hopping"]
    assert answers == [made[i % len(made)]["page"] for i in range(len(answers))]
    # The session really hopped: both workers answered its requests (their PIDs in the access log).
    assert sorted(two_workers["hopping_served"]) == two_workers["worker_pids"], two_workers["hopping_served"]


def test_both_workers_write_every_call_to_one_audit_trail(two_workers):
    audited, made = two_workers["audited"], len(two_workers["crossed"])
    assert all(complete(line) and line["outcome"] == "ok" for line in audited)
    assert {line["pid"] for line in audited} == set(two_workers["worker_pids"])
    expected = Counter({"connect": two_workers["clients"], "get_page": made + len(two_workers["hopping"])})
    for tool in ("create_history", "create_page", "create_dataset_from_text", "create_collection", "update_page",
                 "get_history_details", "list_page_revisions", "get_collection_details"):
        expected[tool] = made
    assert Counter(line["tool"] for line in audited) == expected


def test_no_worker_logged_a_server_error(two_workers):
    log = two_workers["log"]
    assert "Traceback" not in log and "Error calling tool" not in log, log[-3000:]
