"""Bounded waiting: the core of ``wait_for_jobs``.

A wait is a loop of cheap polls with sleeps in between. Two things matter more
than the polling itself: the wait ends by a deadline the server caps (an agent's
client times out, and every waiting call occupies a worker thread), and nothing
the poll used is kept while sleeping. ``release`` runs before every sleep so the
caller can hand its database connection back; a sleeping wait then holds no
connection, no transaction and no stale objects.
"""

import time
from collections.abc import (
    Callable,
    Collection,
    Iterable,
)
from typing import Any

from galaxy_mcp_analysis.core.errors import InvalidInput

#: States a wait ends on: Galaxy's Job.is_terminal states, plus "failed" (a job Galaxy could not start).
WAIT_ENDS = frozenset({"ok", "error", "deleted", "skipped", "paused", "stopped", "failed"})

FIRST_INTERVAL_SECONDS = 0.25
#: The interval grows with the time waited, as this share of it: a job seen at most 5 % after it
#: ended. A fixed fast phase then doubling (0.25 s for 2 s, then 0.5, 1, 2 s) overshot a 6 s Slurm job
#: by up to 2 s (make bench --only runners: wait_for_jobs 1.29 of REST polling at 0.25 s); this keeps
#: 0.25 s for the first 5 s (most uploads and small tools end there) and reaches 2 s at 40 s.
INTERVAL_SHARE_OF_WAIT = 0.05
MAX_INTERVAL_SECONDS = 2.0  # jobs take seconds to hours; 2 s keeps a long wait's polls cheap


def next_interval(waited_seconds: float) -> float:
    """Seconds to sleep before the next poll, after ``waited_seconds`` of waiting."""
    return min(max(FIRST_INTERVAL_SECONDS, waited_seconds * INTERVAL_SHARE_OF_WAIT), MAX_INTERVAL_SECONDS)


class WaitArgumentError(InvalidInput):
    """A timeout the agent can fix."""


def wait_budget(requested: int, cap: int) -> tuple[int, bool]:
    """``(applied, capped)``: the timeout in seconds, limited to the server's ``cap``."""
    if isinstance(requested, bool) or not isinstance(requested, int) or requested < 0:
        raise WaitArgumentError(f"timeout_seconds must be an integer >= 0, got {requested!r}")
    return min(requested, cap), requested > cap


def poll_until(
    done: Callable[[], bool],
    timeout_seconds: float,
    *,
    release: Callable[[], None],
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> bool:
    """Call ``done`` until it is true or ``timeout_seconds`` pass; returns whether it timed out.

    ``done`` is always called at least once, and once more at the deadline, so
    the caller's last snapshot is never older than the wait.
    """
    started = clock()
    deadline = started + timeout_seconds
    while not done():
        now = clock()
        if deadline - now <= 0:
            return True
        release()
        sleep(min(next_interval(now - started), deadline - now))
    return False


def progress_of(states: Iterable[str], finished_states: Collection[str], *, scheduling: bool = False) -> tuple[int, int, str]:
    """``(finished, total, message)`` of a wait on jobs in ``states``, for MCP progress notifications.

    The message counts the finished jobs by state, then the others, e.g.
    ``"4/6 jobs finished: 3 ok, 1 error; 2 running"``; ``scheduling`` adds that more jobs may come.
    """
    states = list(states)
    done: dict[str, int] = {}
    waiting: dict[str, int] = {}
    for state in states:
        counts = done if state in finished_states else waiting
        counts[state] = counts.get(state, 0) + 1
    finished = sum(done.values())
    message = f"{finished}/{len(states)} jobs finished"
    if done:
        message += ": " + ", ".join(f"{count} {state}" for state, count in sorted(done.items()))
    if waiting:
        message += "; " + ", ".join(f"{count} {state}" for state, count in sorted(waiting.items()))
    if scheduling:
        message += "; invocation still scheduling"
    return finished, len(states), message


#: How long back a wait by history looks for jobs that already ended (``since_seconds``' default),
#: and the longest look-back a caller may ask for (a week).
RECENT_SECONDS = 600
MAX_RECENT_SECONDS = 7 * 24 * 3600


def look_back(since_seconds: int) -> int:
    """``since_seconds`` checked: 0 to a week."""
    if not isinstance(since_seconds, int) or isinstance(since_seconds, bool) or not 0 <= since_seconds <= MAX_RECENT_SECONDS:
        raise InvalidInput(
            f"since_seconds must be an integer from 0 to {MAX_RECENT_SECONDS} (a week); got {since_seconds!r}."
        )
    return since_seconds


#: Fields of a wait entry that say a problem is settled, whatever its job's state.
SETTLED = ("replaced_by", "recreated_by", "removed")


def needing_attention(entries: Iterable[dict[str, Any]]) -> list[str]:
    """The job ids of a wait's entries that are still a problem: failed, flagged as a silent failure, or with
    an output that failed after the job, and not settled since (a replaced job keeps its state, so a count of
    states alone reads a problem already fixed as open). What Galaxy or the tool flagged only: a job that ran
    ok and wrote a wrong result is not known here."""
    # Settled: replaced by a rerun, its outputs purged or deleted, or (an upload) its source uploaded again and ok.
    return [entry["job_id"] for entry in entries if not any(entry.get(key) for key in SETTLED) and (
        entry["state"] in ("error", "failed") or entry.get("suspected_silent_failure") or entry.get("failed_outputs"))]


def paused_explanation(
    info: str | None, errored_inputs: list[dict], repair: str | None = None, job_id: str | None = None
) -> dict[str, Any]:
    """Why Galaxy paused a job and what would resume it, from the message Galaxy left on its
    outputs (``info``), the job's inputs that are in the error state and the ``repair`` of the first
    one's creating job (``repair_hint``: a rerun that replaces it, or an upload again)."""
    if errored_inputs:
        if repair and repair.startswith("rerun_job(") and "replace_outputs=true" in repair.split(")", 1)[0]:
            then = "once that succeeds, Galaxy resumes this job"
        else:  # a new dataset beside the failed one: this job must be run again on it
            then = f"then rerun this job on the new dataset: rerun_job(job_id={job_id!r}, changes=...)"
        fix = (repair or "no repair is known for it").rstrip(".")
        return {
            "paused_reason": info or "An input of this job is in the error state.",
            "errored_inputs": errored_inputs,
            "resume_with": (
                f"Fix the failed input: {fix}; {then}; or delete this job's "
                "outputs (delete_history_items) if it is no longer wanted."
            ),
        }
    text = (info or "").lower()
    if "quota" in text or "runtime" in text:
        resume = (
            "Free space or wait for the limit to lift (delete_history_items with purge=true frees disk), then "
            "resume the history's paused jobs in Galaxy (history menu: Resume Paused Jobs)."
        )
    else:
        resume = "Galaxy or an admin paused it; resume the history's paused jobs in Galaxy, or ask the admin."
    return {"paused_reason": info or "Paused by Galaxy without a recorded reason.", "resume_with": resume}
