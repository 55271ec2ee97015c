"""core.tasks: a task's status, message and poll interval from its jobs' states; handles; the wire shapes."""

import hashlib

import pytest

from galaxy_mcp_analysis.core.tasks import (
    created_answer,
    detailed_answer,
    expired,
    failed_state,
    new_task_id,
    poll_interval_ms,
    storage_key,
    task_state,
    TaskTimes,
    timestamp,
    well_formed,
)


@pytest.mark.parametrize("states", [["new"] * 4, ["ok", "ok", "running", "queued"], ["ok", "deleting"],
                                    ["error", "waiting"], ["resubmitted"], ["upload"], ["stop"]])
def test_a_task_works_while_a_job_has_not_ended(states):
    state = task_state(states, False, 30.0)
    assert state.status == "working" and state.poll_interval_ms is not None


def test_the_message_counts_the_jobs_as_wait_for_jobs_does():
    assert task_state(["ok", "ok", "running", "queued"], False, 1).message == "2/4 jobs finished: 2 ok; 1 queued, 1 running"
    assert task_state(["ok", "running"], True, 1).message == "1/2 jobs finished: 1 ok; 1 running; cancelling"


@pytest.mark.parametrize("states, cancelled, status", [
    (["ok"] * 4, False, "completed"),
    (["ok", "error", "paused", "skipped"], False, "completed"),  # a tool's failure is the call's result, not "failed"
    (["failed"], False, "completed"),
    (["deleted", "stopped"], False, "cancelled"),  # every job removed, in Galaxy's own pages
    (["ok", "deleted"], False, "completed"),
    (["ok", "deleted"], True, "cancelled"),
    (["deleted"], True, "cancelled"),
    (["ok", "ok"], True, "completed"),  # the cancel came after every job had ended its own way
])
def test_ended_jobs_complete_the_task_unless_it_was_cancelled(states, cancelled, status):
    state = task_state(states, cancelled, 600.0)
    assert (state.status, state.poll_interval_ms) == (status, None)
    assert state.message.startswith(f"{len(states)}/{len(states)} jobs finished: ")


def test_the_poll_interval_is_a_tenth_of_the_age_within_bounds():
    assert poll_interval_ms(["queued"], 0) == 2000 and poll_interval_ms(["running"], 0) == 1000
    assert poll_interval_ms(["running", "queued"], 150) == 15000 and poll_interval_ms(["new"], 150) == 15000
    assert poll_interval_ms(["running"], 86400) == 30000 and poll_interval_ms(["queued"], 86400) == 60000


def test_handles_are_random_well_formed_and_kept_only_as_their_hash():
    first, second = new_task_id(), new_task_id()
    assert first != second and well_formed(first) and well_formed(second) and len(first) == 43
    assert not well_formed("x" * 42) and not well_formed("x" * 42 + "/") and not well_formed(None)
    assert storage_key(first) == hashlib.sha256(first.encode()).hexdigest() != first


def test_the_wire_shapes_of_a_new_and_an_ended_task():
    times = TaskTimes(created_at=0.0, updated_at=90.5, expires_at=7 * 86400.0)
    working = task_state(["queued"], False, 0)
    assert created_answer("t" * 43, working, times) == {
        "resultType": "task", "taskId": "t" * 43, "status": "working", "statusMessage": "0/1 jobs finished; 1 queued",
        "createdAt": "1970-01-01T00:00:00Z", "lastUpdatedAt": "1970-01-01T00:01:30.500000Z",
        "ttlMs": 7 * 86400 * 1000, "pollIntervalMs": 2000}
    result = {"content": [{"type": "text", "text": "{}"}], "structuredContent": {}, "isError": False}
    done = detailed_answer("t" * 43, task_state(["ok"], False, 9), times, result)
    assert done["resultType"] == "complete" and done["status"] == "completed" and done["result"] == result
    assert "pollIntervalMs" not in done and "error" not in done
    assert "result" not in detailed_answer("t" * 43, working, times, result)
    assert "result" not in detailed_answer("t" * 43, task_state(["deleted"], True, 9), times, result)
    failed = detailed_answer("t" * 43, failed_state("Galaxy no longer has job(s) x of this task."), times, result)
    assert failed["error"] == {"code": -32603, "message": "Galaxy no longer has job(s) x of this task."}
    assert "result" not in failed


def test_a_task_expires_at_its_lifetime():
    assert not expired(100.0, 99.9) and expired(100.0, 100.0)
    assert timestamp(1_700_000_000) == "2023-11-14T22:13:20Z"


def test_an_invocation_works_while_galaxy_schedules_it_and_its_cancel_cancels_the_task():
    scheduling = task_state([], False, 0, scheduling=True)
    assert (scheduling.status, scheduling.message) == ("working", "0/0 jobs finished; invocation still scheduling")
    assert task_state(["ok"], False, 5, scheduling=True).status == "working"
    assert task_state(["ok"], False, 5).status == "completed"
    cancelled = task_state(["ok"], True, 5, invocation_cancelled=True)
    assert (cancelled.status, cancelled.message) == ("cancelled", "1/1 jobs finished: 1 ok; invocation cancelled")
    assert task_state([], False, 5, invocation_cancelled=True).status == "cancelled"  # cancelled in Galaxy's pages
    assert task_state([], False, 5).status == "completed"  # a workflow of inputs only
