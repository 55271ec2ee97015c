"""Issue 43: debugging a broken history through /api/mcp alone, replayed as doc/agent-guide.md's section 9.

A colleague's history, made here on purpose: a table, an upload that failed (text declared as
BAM), a Cut that failed and a sort paused behind it, a Select that warned and left its output
empty, a Filter that rightly kept no rows and a Cut after it, and a Cut of the wrong column that
finished ok. The agent surveys it with one wait, reads each finding's evidence, and makes every
call a ``repair`` names, nothing else: every one must be accepted, and afterwards no job of the
history is failed, flagged or paused, and the wrong result is replaced in place. Every signal is
checked against what the test built, so a misleading one fails the test.

The calls and trimmed responses are the guide's ``broken-*`` blocks (UPDATE_AGENT_GUIDE=1
regenerates them, as for the field report's replay).
"""

import time
import urllib.request

import pytest

from galaxy_mcp_analysis.testing import McpClient
from replay_transcript import Transcript
from suggested_calls import calls_in
from test_field_report_replay import check_guide

TABLE = "chr1\t30\tgeneA\nchr2\t4\tgeneB\nchr3\t200\tgeneC\n"
JOB_SHOWN = ["job_id", "tool_id", "state", "suspected_silent_failure", "empty_outputs", "evidence", "repair",
             "paused_reason", "resume_with"]
REPAIRABLE = {"rerun_job", "create_dataset_from_text", "upload_file_from_url"}


@pytest.fixture
def no_rest(monkeypatch):
    def refuse(request, *args, **kwargs):
        raise AssertionError(f"HTTP outside the MCP client: {getattr(request, 'full_url', request)}")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)


def run(t: Transcript, history: str, tool_id: str, label: str, inputs: dict, wait: bool = True) -> tuple[str, str]:
    """One job, waited for before the next starts (``wait``): the survey lists jobs by when they ended, so
    the guide's block is the same on every run."""
    result = t.ok("run_tool", history_id=history, tool_id=tool_id, inputs=inputs, show=None)
    job, output = result["jobs"][0]["id"], result["outputs"][0]["id"]
    t.names.name("job", job, label)
    t.names.name("dataset", output, f"{label} output")
    if wait:
        wait_all(t, None, job_ids=[job])
    return job, output


def wait_all(t: Transcript, show, **names) -> dict:
    deadline = time.monotonic() + 600
    while True:
        waited = t.ok("wait_for_jobs", timeout_seconds=110, show=show, **names)
        if waited["all_terminal"]:
            return waited
        assert time.monotonic() < deadline, waited
        show = None


def build(t: Transcript) -> tuple[str, dict[str, tuple[str, str]]]:
    """The broken history, made through MCP (not shown in the guide: the agent finds it made)."""
    history = t.ok("create_history", name="a colleague's broken history", show=None)["id"]
    t.names.name("history", history, "history")
    table = t.ok("create_dataset_from_text", history_id=history, content=TABLE, file_type="tabular",
                 name="genes.tsv", show=None)
    t.names.name("dataset", table["dataset_id"], "genes.tsv")
    t.names.name("job", table["job_id"], "upload genes.tsv")
    wait_all(t, None, job_ids=[table["job_id"]])
    bam = t.ok("create_dataset_from_text", history_id=history, content="not a bam file\n", file_type="bam",
               name="reads.bam", show=None)
    t.names.name("job", bam["job_id"], "upload reads.bam")
    t.names.name("dataset", bam["dataset_id"], "reads.bam")
    wait_all(t, None, job_ids=[bam["job_id"]])
    genes = {"src": "hda", "id": table["dataset_id"]}
    made = {"bam": (bam["job_id"], bam["dataset_id"])}
    # The sort is queued while the Cut runs (a failed input is refused up front): Galaxy pauses it when the Cut fails.
    made["cut"] = run(t, history, "Cut1", "Cut (bad columns)", {"input": genes, "columnList": "c-one", "delimiter": "T"},
                      wait=False)
    made["sort"] = run(t, history, "sort1", "sort (after the bad Cut)",
                       {"input": {"src": "hda", "id": made["cut"][1]}, "column": 1, "style": "alpha", "order": "ASC"})
    made["grep"] = run(t, history, "Grep1", "Select (bad pattern)",
                       {"input": genes, "pattern": "(gene", "invert": "", "keep_header": False})
    made["filter"] = run(t, history, "Filter1", "Filter (no gene that long)",
                         {"input": genes, "cond": "c2>1000", "header_lines": 0})
    made["after filter"] = run(t, history, "Cut1", "Cut (after the Filter)",
                               {"input": {"src": "hda", "id": made["filter"][1]}, "columnList": "c3", "delimiter": "T"})
    made["wrong"] = run(t, history, "Cut1", "Cut (wrong column)", {"input": genes, "columnList": "c1", "delimiter": "T"})
    return history, made


def test_a_broken_history_is_debugged_with_the_hints_alone(galaxy, no_rest, record_testsuite_property):
    started = time.monotonic()
    client = McpClient(galaxy.mcp_url)
    try:
        t = Transcript(client, galaxy.api_key)
        t.block = "broken-build"
        history, made = build(t)
        built_calls = len(t.calls)
        debug(t, history, made)
    finally:
        client.close()
    calls = len(t.calls) - built_calls
    record_testsuite_property("broken_history_debug_mcp_calls", calls)
    print(f"\nbroken-history debugging: {calls} MCP calls after the {built_calls} that built it; wall time "
          f"{time.monotonic() - started:.1f} s")
    check_guide({name: body for name, body in t.render().items() if name != "broken-build"}, owned="broken-")


def debug(t: Transcript, history: str, made: dict[str, tuple[str, str]]) -> None:
    # ---- one survey: every job of the history, with its flags and their evidence ----
    t.block = "broken-survey"
    survey = t.ok("wait_for_jobs", history_id=history, timeout_seconds=0, since_seconds=3600,
                  show={"recently_finished": JOB_SHOWN, "paused": JOB_SHOWN})
    jobs = {entry["job_id"]: entry for entry in survey["recently_finished"] + survey["paused"]}
    state = {what: jobs[job]["state"] for what, (job, _) in made.items()}
    assert state == {"bam": "ok", "cut": "error", "sort": "paused", "grep": "ok", "filter": "ok",
                     "after filter": "ok", "wrong": "ok"}, state
    flagged = {what for what, (job, _) in made.items() if jobs[job]["suspected_silent_failure"]}
    assert flagged == {"grep"}, flagged  # only the job that complained (stderr, a warning) is flagged
    for what in ("filter", "after filter"):  # empty results of clean runs: said, not called failures
        [empty] = jobs[made[what][0]]["empty_outputs"]
        assert empty["may_be_empty"] is True and "repair" not in jobs[made[what][0]], jobs[made[what][0]]
    assert "repair" not in jobs[made["wrong"][0]]  # an ok job with a result only the agent can judge
    # What is still a problem, by id: the failures, the flagged job and the upload whose dataset failed.
    assert set(survey["needs_attention"]) == {made["cut"][0], made["grep"][0], made["bam"][0]}, survey

    # ---- the findings' evidence ----
    t.block = "broken-diagnose"
    upload = t.ok("get_job_errors", dataset_id=made["bam"][1],  # Galaxy's message names a server path: not shown
                  show={"job_id": True, "tool_id": True, "state": True, "empty_outputs": True,
                        "failed_outputs": ["name", "dataset_id", "state"], "repair": True, "no_repair": True})
    assert upload["empty_outputs"] == [], upload  # a failed dataset is judged by its state, not its size
    # Text declared as BAM: no file_type makes it the BAM meant, so no call is offered as a repair.
    assert "repair" not in upload and "only its owner" in upload["no_repair"], upload
    assert upload["failed_outputs"][0]["dataset_id"] == made["bam"][1] and "samtools" in upload["failed_outputs"][0][
        "message"]
    grep = t.ok("get_job_errors", job_id=made["grep"][0],
                show=["tool_id", "exit_code", "tool_stderr", "job_messages", "evidence", "suspected_silent_failure"])
    assert grep["tool_stderr"].startswith("grep:") and grep["evidence"]["tool_stderr_bytes"] > 0

    # ---- every repair, as written: the agent chooses only what `...` leaves open ----
    t.block = "broken-repair"
    chosen = {made["cut"][0]: {"columnList": "c1,c3"}, made["grep"][0]: {"pattern": "gene"}}
    hints = [jobs[made[what][0]].get("repair") for what in made]
    repairs = {call.text: call for hint in hints if hint for call in calls_in(hint, REPAIRABLE)}
    assert {call.tool for call in repairs.values()} == {"rerun_job"}, repairs
    new_jobs = []
    for call in repairs.values():
        arguments = call.fill(changes=chosen.get(call.arguments.get("job_id")), file_type="txt")
        result = t.ok(call.tool, **arguments, show=["replaced_outputs", "replaced", "resumed_jobs", "dataset_id"])
        made_now = [job["id"] for job in result.get("jobs", [])] + ([result["job_id"]] if "job_id" in result else [])
        for job in made_now:
            t.names.name("job", job, f"repair job {len(new_jobs) + 1}")
            new_jobs.append(job)
    # The wrong column, found by reading it: replaced where it was.
    wrong = t.ok("peek_dataset_content", dataset_id=made["wrong"][1], show=["content"])
    assert wrong["content"] == "chr1\nchr2\nchr3\n"
    fixed = t.ok("rerun_job", job_id=made["wrong"][0], changes={"columnList": "c3"}, replace_outputs=True,
                 show=["replaced"])
    t.names.name("job", fixed["jobs"][0]["id"], "Cut (column 3)")
    new_jobs += [job["id"] for job in fixed["jobs"]]
    done = wait_all(t, {"jobs": ["job_id", "tool_id", "state", "suspected_silent_failure"], "all_terminal": True},
                    job_ids=new_jobs + [made["sort"][0]])
    assert {entry["state"] for entry in done["jobs"]} == {"ok"}, done
    assert not any(entry["suspected_silent_failure"] for entry in done["jobs"]), done
    [replaced] = fixed["replaced"]
    read = t.ok("peek_dataset_content", dataset_id=replaced["dataset_id"], show=["content"])
    assert read["content"] == "geneA\ngeneB\ngeneC\n" and replaced["hid"] is not None
    # A survey after the fix: each replaced job names the job that took its places and offers no second repair.
    after = t.ok("wait_for_jobs", history_id=history, timeout_seconds=0, since_seconds=3600, show=None)
    jobs = {entry["job_id"]: entry for entry in after["recently_finished"] + after.get("paused", [])}
    for what in ("cut", "grep", "wrong"):  # the wrong column too, never flagged: its stale result must not look current
        entry = jobs[made[what][0]]
        assert entry.get("replaced_by") in new_jobs and "repair" not in entry, entry
    bam = jobs[made["bam"][0]]
    assert "replaced_by" not in bam and "repair" not in bam and "only its owner" in bam["no_repair"], bam
    assert (bam["state"], bam["failed_outputs"]) == ("ok", [made["bam"][1]]), bam  # the ok job's failed output, said
    # Replaced jobs keep their states in the count (the failed Cut's error) but are no longer a problem.
    assert after["needs_attention"] == [made["bam"][0]] and after["history_state_counts"]["error"] >= 1, after
    # The job list agrees (read outside the transcript: a check, not a step of the debugging).
    rows = t.client.call("list_jobs", {"history_id": history, "limit": 100, "api_key": t.api_key}).structured_content
    replaced = {row["job_id"]: row.get("replaced_by") for row in rows["jobs"]}
    assert all(replaced[made[what][0]] in new_jobs for what in ("cut", "grep", "wrong")), replaced
