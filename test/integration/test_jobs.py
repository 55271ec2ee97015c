"""Issue 5: get_job_errors, silent-failure flags and wait_for_jobs through /api/mcp, with real jobs."""

import json
import os
import re
import threading
import time
import urllib.error
from pathlib import Path

import pytest

from conftest import (
    fetch,
    held_upload,
    missing_id,
)
from galaxy_mcp_analysis.operations.jobs.waiting import MAX_SLEEPING_WAITS
from galaxy_mcp_analysis.testing import (
    HeldFiles,
    rest,
)

MARKER = re.compile(r"\n\[\.\.\. (\d+) bytes dropped from the middle of this log \.\.\.\]\n")
CUT_COMPLAINT = "No columns specified, columns are not preceded with 'c'"


# ---- set-up helpers ----


@pytest.fixture(scope="module")
def jobs_history(mcp, api_key):
    return mcp.call_ok("create_history", name="debugging jobs", api_key=api_key)["id"]


@pytest.fixture(scope="module")
def table(galaxy, api_key, jobs_history):
    dataset = fetch(galaxy, api_key, jobs_history, {"src": "pasted", "paste_content": "chr1\t5\tb\nchr2\t3\ta\n", "ext": "tabular"})
    assert dataset["state"] == "ok", dataset
    return dataset["id"]


def run(mcp, api_key, history_id, tool_id, inputs) -> dict:
    return mcp.call_ok("run_tool", history_id=history_id, tool_id=tool_id, inputs=inputs, api_key=api_key)


def finished(mcp, api_key, **names) -> dict:
    waited = mcp.call_ok("wait_for_jobs", timeout_seconds=120, api_key=api_key, **names)
    assert waited["all_terminal"] and not waited["timed_out"], waited
    return waited


def run_to_end(mcp, api_key, history_id, tool_id, inputs) -> tuple[str, str]:
    """Run a one-job tool and wait for it; returns (job id, output dataset id)."""
    result = run(mcp, api_key, history_id, tool_id, inputs)
    [job] = result["jobs"]
    finished(mcp, api_key, job_ids=[job["id"]])
    return job["id"], result["outputs"][0]["id"]


def build_list(galaxy, api_key, history_id, datasets: dict[str, str]) -> dict:
    """A list collection of {identifier: dataset id}, made through REST."""
    elements = [{"name": name, "src": "hda", "id": dataset_id} for name, dataset_id in datasets.items()]
    payload = {"history_id": history_id, "collection_type": "list", "element_identifiers": elements}
    return rest(galaxy.galaxy_url, "/api/dataset_collections", api_key, payload)


def cut(table, columns):
    return {"input": {"src": "hda", "id": table}, "columnList": columns, "delimiter": "T"}


def grep(dataset, pattern):
    return {"input": {"src": "hda", "id": dataset}, "pattern": pattern, "invert": "", "keep_header": False}


@pytest.fixture(scope="module")
def succeeded(mcp, api_key, jobs_history, table):
    return run_to_end(mcp, api_key, jobs_history, "cat1", {"input1": {"src": "hda", "id": table}})


@pytest.fixture(scope="module")
def failed(mcp, api_key, jobs_history, table):
    """Cut1 dies (exit 255) naming the column list it could not parse: a long list makes a long stderr."""
    return run_to_end(mcp, api_key, jobs_history, "Cut1", cut(table, "HEAD" + "x" * 12_000 + "TAIL"))


# ---- get_job_errors ----


def test_a_successful_job_has_empty_logs_and_no_suspicion(mcp, api_key, succeeded):
    job_id, _ = succeeded
    report = mcp.call_ok("get_job_errors", job_id=job_id, api_key=api_key)
    assert (report["job_id"], report["tool_id"], report["state"], report["exit_code"]) == (job_id, "cat1", "ok", 0)
    assert {report[log] for log in ("info", "tool_stderr", "tool_stdout", "job_stderr", "job_stdout")} == {""}
    assert (report["empty_outputs"], report["suspected_silent_failure"], report["truncated"]) == ([], False, False)
    assert "command_line" not in report  # a regular user, and expose_dataset_path is off


def test_a_failing_job_shows_its_exit_code_and_the_tools_stderr(galaxy, mcp, api_key, failed):
    job_id, _ = failed
    report = mcp.call_ok("get_job_errors", job_id=job_id, max_bytes=100_000, api_key=api_key)
    assert (report["state"], report["exit_code"], report["truncated"]) == ("error", 255, False)
    assert report["tool_stderr"].startswith(CUT_COMPLAINT)
    # The same log REST gives the owner, unabridged within the budget.
    assert report["tool_stderr"] == rest(galaxy.galaxy_url, f"/api/jobs/{job_id}?full=true", api_key)["tool_stderr"]
    assert report["suspected_silent_failure"] is False  # a failure, but not a silent one


def test_a_long_log_keeps_its_head_and_tail_within_max_bytes(galaxy, mcp, api_key, failed):
    job_id, _ = failed
    whole = rest(galaxy.galaxy_url, f"/api/jobs/{job_id}?full=true", api_key)["tool_stderr"].encode()
    assert len(whole) > 12_000
    for max_bytes in (1000, 4000):
        report = mcp.call_ok("get_job_errors", job_id=job_id, max_bytes=max_bytes, api_key=api_key)
        stderr = report["tool_stderr"]
        [match] = MARKER.finditer(stderr)
        head, tail = stderr[: match.start()].encode(), stderr[match.end() :].encode()
        assert len(stderr.encode()) <= max_bytes and report["truncated"] is True
        assert whole.startswith(head) and head.startswith(CUT_COMPLAINT.encode())
        assert whole.endswith(tail) and tail.endswith(b"xTAIL\n")
        assert int(match.group(1)) == len(whole) - len(head) - len(tail)


def test_the_default_budget_is_4000_bytes_per_log(mcp, api_key, failed):
    report = mcp.call_ok("get_job_errors", job_id=failed[0], api_key=api_key)
    assert report["max_bytes_applied"] == 4000 and report["capped"] is False
    assert 3990 <= len(report["tool_stderr"].encode()) <= 4000


def test_a_dataset_id_reads_the_job_that_created_it(mcp, api_key, failed):
    job_id, output_id = failed
    by_job = mcp.call_ok("get_job_errors", job_id=job_id, api_key=api_key)
    by_dataset = mcp.call_ok("get_job_errors", dataset_id=output_id, api_key=api_key)
    assert by_dataset.pop("dataset_id") == output_id
    assert by_dataset == by_job


@pytest.mark.parametrize("ids", ["both", "neither"])
def test_exactly_one_of_job_id_and_dataset_id(mcp, api_key, failed, ids):
    arguments = {"job_id": failed[0], "dataset_id": failed[1]} if ids == "both" else {}
    error = mcp.call_error("get_job_errors", api_key=api_key, **arguments)
    assert error.startswith(f"[VALIDATION_ERROR] Pass exactly one of job_id or dataset_id (got {ids}).")
    assert "\nSuggestion: " in error


def test_a_budget_below_256_bytes_is_a_validation_error(mcp, api_key, failed):
    error = mcp.call_error("get_job_errors", job_id=failed[0], max_bytes=255, api_key=api_key)
    assert error.startswith("[VALIDATION_ERROR] max_bytes must be an integer >= 256, got 255")


def test_an_unknown_job_is_not_found(galaxy, mcp, api_key):
    missing = missing_id(galaxy)
    error = mcp.call_error("get_job_errors", job_id=missing, api_key=api_key)
    assert error.startswith(f"[NOT_FOUND] No job with id {missing} exists.")
    error = mcp.call_error("get_job_errors", dataset_id=missing, api_key=api_key)
    assert error.startswith(f"[NOT_FOUND] No history dataset with id {missing} exists.")


def test_command_line_only_where_galaxy_shows_it(mcp, api_key, admin_key, failed):
    as_owner = mcp.call_ok("get_job_errors", job_id=failed[0], api_key=api_key)
    as_admin = mcp.call_ok("get_job_errors", job_id=failed[0], api_key=admin_key)
    assert "command_line" not in as_owner
    assert "cutWrapper.pl" in as_admin["command_line"]


# ---- silent failures ----


def test_an_ok_job_with_an_empty_output_is_a_suspected_silent_failure(galaxy, mcp, api_key, jobs_history, table):
    """Three ways a job ends ok with nothing: exit 0, grep's "no match" 1 (both clean: an empty result can be
    right, and a rerun gives the same), and grep's exit 2 for a bad pattern, which Grep1 declares a mere
    warning: the job complained, so it is suspect (the bakta | tee case of the field report)."""
    cases = {
        "exit 0": ("Remove beginning1", {"input": {"src": "hda", "id": table}, "num_lines": 50}, 0, False),
        "no match": ("Grep1", grep(table, "nothing-matches-this"), 1, False),
        "bad pattern": ("Grep1", grep(table, "(unclosed"), 2, True),
    }
    for case, (tool_id, inputs, exit_code, suspect) in cases.items():
        job_id, output_id = run_to_end(mcp, api_key, jobs_history, tool_id, inputs)
        report = mcp.call_ok("get_job_errors", job_id=job_id, api_key=api_key)
        assert (report["state"], report["exit_code"], report["suspected_silent_failure"]) == ("ok", exit_code, suspect), case
        [empty] = report["empty_outputs"]
        assert (empty["name"], empty["dataset_id"], empty["size"], empty["may_be_empty"]) == (
            "out_file1", output_id, 0, not suspect), case
        assert ("repair" in report) is suspect, case
        assert report["evidence"]["exit_code"] == exit_code and report["evidence"]["input_sizes"] == [18], report
        assert int(rest(galaxy.galaxy_url, f"/api/datasets/{output_id}", api_key)["file_size"]) == 0
        status = mcp.call_ok("get_job_status", job_id=job_id, api_key=api_key)
        assert status["job"]["id"] == job_id  # Galaxy's own result is kept
        assert (status["empty_outputs"], status["suspected_silent_failure"]) == (report["empty_outputs"], suspect)
        assert status["evidence"] == report["evidence"]
        if case == "bad pattern":
            assert report["tool_stderr"] == "grep: missing closing parenthesis\n"
            assert report["job_messages"][0]["desc"] == "Warning: Exit code 2 (Select failed)"


def test_get_job_status_of_a_job_with_output_is_not_suspect(mcp, api_key, succeeded):
    status = mcp.call_ok("get_job_status", job_id=succeeded[0], api_key=api_key)
    assert (status["job"]["state"], status["empty_outputs"], status["suspected_silent_failure"]) == ("ok", [], False)


# ---- map-over ----


def test_a_mapped_run_is_debugged_element_by_element(galaxy, mcp, api_key, jobs_history):
    matching = fetch(galaxy, api_key, jobs_history, {"src": "pasted", "paste_content": "chr9 yes\n", "ext": "txt"})
    other = fetch(galaxy, api_key, jobs_history, {"src": "pasted", "paste_content": "no match here\n", "ext": "txt"})
    collection = build_list(galaxy, api_key, jobs_history, {"hit": matching["id"], "miss": other["id"]})
    mapped_input = {"batch": True, "values": [{"src": "hdca", "id": collection["id"]}]}
    result = run(mcp, api_key, jobs_history, "Grep1", {**grep(None, "chr"), "input": mapped_input})
    job_ids = [job["id"] for job in result["jobs"]]
    assert len(job_ids) == 2

    waited = finished(mcp, api_key, job_ids=job_ids)
    assert sorted(entry["job_id"] for entry in waited["jobs"]) == sorted(job_ids)
    assert [entry["suspected_silent_failure"] for entry in waited["jobs"]] == [False, False]  # no match is no failure

    # Later, from the mapped collection alone: its elements' datasets lead to the element jobs.
    [mapped] = result["implicit_collections"]
    elements = mcp.call_ok("get_collection_details", collection_id=mapped["id"], api_key=api_key)["collection"]["elements"]
    by_identifier = {element["element_identifier"]: element["object"]["id"] for element in elements}
    again = finished(mcp, api_key, dataset_ids=list(by_identifier.values()))
    assert sorted(entry["job_id"] for entry in again["jobs"]) == sorted(job_ids)
    miss = mcp.call_ok("get_job_errors", dataset_id=by_identifier["miss"], api_key=api_key)
    hit = mcp.call_ok("get_job_errors", dataset_id=by_identifier["hit"], api_key=api_key)
    assert (miss["suspected_silent_failure"], hit["suspected_silent_failure"]) == (False, False)
    assert miss["empty_outputs"][0]["dataset_id"] == by_identifier["miss"]  # hidden element datasets count
    assert miss["empty_outputs"][0]["may_be_empty"] is True and hit["empty_outputs"] == []
    assert {miss["job_id"], hit["job_id"]} == set(job_ids)
    assert "repair" not in miss and not [entry for entry in waited["jobs"] if "repair" in entry], miss

    # The wrong (empty) element of an ok job is replaced in place: the rerun's output becomes element "miss".
    rerun = mcp.call_ok("rerun_job", job_id=miss["job_id"], changes={"pattern": "match"}, replace_outputs=True,
                        api_key=api_key)
    [new_output] = rerun["outputs"]
    assert finished(mcp, api_key, job_ids=[rerun["jobs"][0]["id"]])["jobs"][0]["state"] == "ok"
    details = mcp.call_ok("get_collection_details", collection_id=mapped["id"], api_key=api_key)["collection"]
    repaired = {element["element_identifier"]: element["object"]["id"] for element in details["elements"]}
    assert repaired == {"hit": by_identifier["hit"], "miss": new_output["id"]}, rerun
    read = mcp.call_ok("peek_dataset_content", dataset_id=new_output["id"], api_key=api_key)
    assert read["content"] == "no match here\n"


# ---- wait_for_jobs ----


def test_wait_by_job_ids_reports_each_job(mcp, api_key, succeeded, failed):
    waited = finished(mcp, api_key, job_ids=[succeeded[0], failed[0], succeeded[0]])
    entries = {entry["job_id"]: entry for entry in waited["jobs"]}
    assert len(waited["jobs"]) == 2  # a job named twice is waited for once
    assert entries[succeeded[0]] == {
        "job_id": succeeded[0], "tool_id": "cat1", "state": "ok", "exit_code": 0, "suspected_silent_failure": False,
    }
    assert (entries[failed[0]]["state"], entries[failed[0]]["exit_code"]) == ("error", 255)
    assert entries[failed[0]]["repair"].startswith(f"rerun_job(job_id={failed[0]!r}, changes=..., replace_outputs=true")
    assert waited["state_counts"] == {"ok": 1, "error": 1}


def test_a_wait_past_the_server_cap_is_clamped_and_says_so(mcp, api_key, succeeded):
    waited = mcp.call_ok("wait_for_jobs", job_ids=[succeeded[0]], timeout_seconds=100_000, api_key=api_key)
    assert (waited["capped"], waited["timeout_applied"], waited["all_terminal"]) == (True, 120, True)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "[VALIDATION_ERROR] Name the jobs to wait for: job_ids, dataset_ids, history_id or invocation_id."),
        ({"job_ids": []}, "[VALIDATION_ERROR] Name the jobs to wait for"),
        ({"job_ids": ["x"] * 501}, "[VALIDATION_ERROR] One wait tracks at most 500 jobs; 501 ids were given."),
        ({"timeout_seconds": -1}, "[VALIDATION_ERROR] timeout_seconds must be an integer >= 0, got -1"),
    ],
)
def test_wait_argument_errors(mcp, api_key, succeeded, arguments, message):
    if "timeout_seconds" in arguments:
        arguments["job_ids"] = [succeeded[0]]
    assert mcp.call_error("wait_for_jobs", api_key=api_key, **arguments).startswith(message)


def test_a_wait_times_out_then_sees_the_jobs_finish(galaxy, mcp, api_key, history_id, held_files):
    """By history: the held upload and the job waiting on its output are both unfinished."""
    upload_job, uploaded, release = held_upload(galaxy, mcp, api_key, history_id, held_files, "timeout.tsv")
    result = run(mcp, api_key, history_id, "cat1", {"input1": {"src": "hda", "id": uploaded}})
    downstream = result["jobs"][0]["id"]

    waited = mcp.call_ok("wait_for_jobs", history_id=history_id, timeout_seconds=1, api_key=api_key)
    assert (waited["timed_out"], waited["all_terminal"]) == (True, False)
    assert {entry["job_id"] for entry in waited["jobs"]} == {upload_job, downstream}
    assert not {entry["state"] for entry in waited["jobs"]} & {"ok", "error"}
    assert waited["waited_seconds"] >= 1  # it waited out its timeout (how long past it: make bench)

    release.set()
    waited = finished(mcp, api_key, job_ids=[upload_job, downstream])
    assert {entry["job_id"]: entry["state"] for entry in waited["jobs"]} == {upload_job: "ok", downstream: "ok"}
    # Nothing left to wait for: an empty wait returns at once.
    idle = mcp.call_ok("wait_for_jobs", history_id=history_id, timeout_seconds=60, api_key=api_key)
    assert (idle["jobs"], idle["all_terminal"], idle["timed_out"]) == ([], True, False)


def test_a_tool_on_an_upload_still_detecting_its_datatype_runs(galaxy, mcp, api_key, history_id, held_files):
    """An upload with ext 'auto' is 'auto' until it ends: Galaxy takes a tool request on it at once (the job waits),
    so run_tool must too; the datatype it detects is the one the job meets."""
    url, release = held_files.hold("detected.tsv", b"chr1\t10\tx\nchr2\t20\ty\n")
    uploaded = fetch(galaxy, api_key, history_id, {"src": "url", "url": url, "ext": "auto"}, wait=False)["id"]
    try:
        assert rest(galaxy.galaxy_url, f"/api/datasets/{uploaded}", api_key)["extension"] == "auto"
        result = run(mcp, api_key, history_id, "Cut1", {"input": {"src": "hda", "id": uploaded}, "columnList": "c2",
                                                       "delimiter": "T"})  # Cut1 takes tabular or txt, not 'auto'
    finally:
        release.set()
    waited = finished(mcp, api_key, job_ids=[result["jobs"][0]["id"]])
    assert waited["jobs"][0]["state"] == "ok", waited
    read = mcp.call_ok("peek_dataset_content", dataset_id=result["outputs"][0]["id"], api_key=api_key)
    assert read["content"] == "10\n20\n", read


def open_transactions(galaxy) -> int:
    """What a session kept across a sleeping wait would hold. On PostgreSQL: the server's own view
    (pg_stat_activity, asked from this test's connection) of this Galaxy's sessions idle in an open
    transaction. On sqlite: the files the Galaxy process has open on its database (one per connection
    checked out or pooled; a transaction holds its connection)."""
    if galaxy.database_url:
        import sqlalchemy

        engine = sqlalchemy.create_engine(galaxy.database_url, poolclass=sqlalchemy.pool.NullPool)
        try:
            with engine.connect() as connection:
                return connection.execute(sqlalchemy.text(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                    "AND state LIKE 'idle in transaction%' AND pid <> pg_backend_pid()")).scalar_one()
        finally:
            engine.dispose()
    count = 0
    pid = galaxy.process.pid
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            count += "universe.sqlite" in os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            pass  # closed while we looked
    return count


def all_waits_asleep(mcp, api_key, finished_job) -> bool:
    """Bounded wait until every sleeping-wait slot is taken: a wait then answers server_busy. The probe names a
    finished job, so when it does get a slot it holds it only for one poll."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        probe = mcp.call_ok("wait_for_jobs", job_ids=[finished_job], timeout_seconds=1, api_key=api_key)
        if probe.get("server_busy"):
            return True
        time.sleep(0.2)
    return False


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="counts open files through /proc on sqlite")
def test_sleeping_waits_hold_no_database_connection_and_block_no_other_call(
    galaxy, mcp, api_key, history_id, held_files, succeeded
):
    """As many waits as may sleep at once (16); each would hold an open transaction (on sqlite, a
    connection: an open file) if it kept its session between polls. Meanwhile another call is served,
    and one wait more checks once."""
    job_id, _, release = held_upload(galaxy, mcp, api_key, history_id, held_files, "concurrent.tsv")
    waits = MAX_SLEEPING_WAITS
    baseline = max(open_transactions(galaxy) for _ in range(3))
    ended: list[float] = []

    def wait():
        # A wait that lost its slot to the probe below checked once (server_busy): it waits again.
        while mcp.call_ok("wait_for_jobs", job_ids=[job_id], timeout_seconds=120, api_key=api_key).get("server_busy"):
            pass
        ended.append(time.monotonic())

    threads = [threading.Thread(target=wait) for _ in range(waits)]
    for thread in threads:
        thread.start()
    try:
        assert all_waits_asleep(mcp, api_key, succeeded[0]), "the waits never all took a slot"
        # Between their polls the waits hold nothing, so the count drops back near what it was before. Had
        # they kept their sessions, all 16 would stay held for the whole wait and it never would.
        # (A count taken while several waits are mid-poll on a loaded machine may be high: sample until low.)
        bound = baseline + waits // 2
        during = [open_transactions(galaxy)]
        for _ in range(100):
            if during[-1] < bound:
                break
            time.sleep(0.3)
            during.append(open_transactions(galaxy))
        mcp.call_ok("connect", api_key=api_key)
        connect_returned = time.monotonic()
        one_more = mcp.call_ok("wait_for_jobs", job_ids=[job_id], timeout_seconds=6, api_key=api_key)
        one_more_returned = time.monotonic()
        assert ended == []  # the upload is still held: every wait is still sleeping
    finally:
        release.set()  # the upload finishes; the sleeping waits see it and end
        for thread in threads:
            thread.join(180)

    assert len(ended) == waits
    assert connect_returned < one_more_returned < min(ended)
    assert (one_more["server_busy"], one_more["timed_out"], one_more["jobs"][0]["job_id"]) == (True, True, job_id)
    assert during[-1] < bound, (baseline, during)
    after = mcp.call_ok("wait_for_jobs", job_ids=[job_id], timeout_seconds=1, api_key=api_key)
    assert "server_busy" not in after and after["all_terminal"]  # the slots are free again


# ---- a second user ----


@pytest.fixture(scope="module")
def private_failure(galaxy, mcp, api_key, jobs_history, table):
    """A failed job whose output is private, with a stderr worth stealing."""
    job_id, output_id = run_to_end(mcp, api_key, jobs_history, "Cut1", cut(table, "SECRET-SAUCE"))
    rest(galaxy.galaxy_url, f"/api/datasets/{output_id}/permissions", api_key, {"action": "make_private"}, method="PUT")
    return job_id, output_id


def rest_denies(galaxy, path, api_key) -> bool:
    try:
        rest(galaxy.galaxy_url, path, api_key)
    except urllib.error.HTTPError as e:
        assert e.code in (403, 404)
        return True
    return False


def test_another_users_job_is_an_error_that_leaks_no_log(galaxy, mcp, other_user_key, jobs_history, private_failure):
    job_id, output_id = private_failure
    assert rest_denies(galaxy, f"/api/jobs/{job_id}?full=true", other_user_key)  # Galaxy's own rule
    calls = [
        ("get_job_errors", {"job_id": job_id}, "[AUTHORIZATION_ERROR] Job "),
        ("get_job_errors", {"dataset_id": output_id}, "[AUTHORIZATION_ERROR] Dataset "),
        ("wait_for_jobs", {"job_ids": [job_id]}, "[AUTHORIZATION_ERROR] Job "),
        ("wait_for_jobs", {"dataset_ids": [output_id]}, "[AUTHORIZATION_ERROR] Dataset "),
        ("wait_for_jobs", {"history_id": jobs_history}, "[AUTHORIZATION_ERROR] History "),
    ]
    for tool, arguments, start in calls:
        error = mcp.call_error(tool, api_key=other_user_key, **arguments)
        assert error.startswith(start), (tool, arguments, error)
        assert "SECRET" not in error and "No columns" not in error
    stock = mcp.call_error("get_job_status", job_id=job_id, api_key=other_user_key)
    assert "SECRET" not in stock


def test_a_job_with_public_outputs_is_readable_as_in_galaxys_rest_api(galaxy, mcp, api_key, other_user_key, failed):
    """Galaxy lets anyone who can access all of a job's outputs see the job; MCP follows it."""
    job_id, _ = failed
    assert not rest_denies(galaxy, f"/api/jobs/{job_id}?full=true", other_user_key)
    assert mcp.call_ok("get_job_errors", job_id=job_id, api_key=other_user_key)["state"] == "error"


# ---- descriptions ----


def test_tools_are_declared_read_only_with_the_debugging_path(mcp):
    tools = {tool.name: tool for tool in mcp.list_tools()}
    for name in ("get_job_errors", "wait_for_jobs"):
        assert tools[name].annotations.read_only_hint is True
        assert tools[name].annotations.destructive_hint is False
    assert "Next: peek_dataset_content (a suspect output or input), get_job_parameters, the repair." in tools[
        "get_job_errors"].description
    assert set(tools["wait_for_jobs"].input_schema["properties"]) == {
        "api_key", "job_ids", "dataset_ids", "history_id", "invocation_id", "timeout_seconds", "since_seconds",
    }
    assert "suspected_silent_failure" in tools["get_job_status"].description
    assert "wait_for_jobs" in tools["get_job_status"].description
    assert "get_job_errors" in tools["get_job_details"].description
