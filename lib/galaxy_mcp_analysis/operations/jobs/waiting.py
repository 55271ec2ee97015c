"""Waiting for jobs: ``wait_for_jobs`` by job, output dataset, history or workflow invocation.

One wait polls the jobs' states in one query per poll (the jobs permission-checked once, through
the lookup layer), gives the database connection back between polls, reports MCP progress, and
ends early when the server drains for a restart; the rules (budget, look-back, progress, why a job
is paused) live in ``core.waiting``.
"""

import threading
import time
from collections import Counter
from collections.abc import Callable
from contextlib import contextmanager
from datetime import (
    datetime,
    timedelta,
)
from typing import Any

from galaxy.model import Job
from galaxy.schema.schema import JobState
from galaxy.webapps.galaxy.services.jobs import JobIndexPayload
from sqlalchemy import select

from galaxy_mcp_analysis.core.errors import (
    AnalysisError,
    ErrorCode,
)
from galaxy_mcp_analysis.core.job_logs import OutputVerdict
from galaxy_mcp_analysis.core.job_records import (
    JobRecord,
    Memo,
)
from galaxy_mcp_analysis.core.waiting import (
    look_back,
    needing_attention,
    paused_explanation,
    poll_until,
    progress_of,
    RECENT_SECONDS,
    WAIT_ENDS,
    wait_budget,
)
from galaxy_mcp_analysis.operations.jobs.failures import (
    stderr_head,
    verdict_fields,
)
from galaxy_mcp_analysis.operations.jobs.loading import (
    indexed_jobs,
    job_records,
)

STILL_RUNNING = sorted(state.value for state in JobState if state.value not in WAIT_ENDS)
#: Jobs one wait tracks (Galaxy's own page size for job listings).
MAX_WAITED_JOBS = 500
#: Jobs a wait by history lists under recently_finished, newest first.
MAX_RECENT_JOBS = 50
#: Waits that may sleep at once in one Galaxy process. MCP tools run on anyio's worker threads
#: (40 by default, shared by every MCP call); measured: with 45 sleeping waits a `connect` took
#: 6.9 s instead of 0.02 s. Past this many, a wait checks once and says server_busy.
MAX_SLEEPING_WAITS = 16
_sleeping_waits = threading.BoundedSemaphore(MAX_SLEEPING_WAITS)
#: Set when this server process starts a graceful shutdown (Galaxy's gunicorn worker and the
#: `make serve` launcher both run the drain callbacks). A sleeping wait would otherwise hold
#: the drain open for up to max_wait_seconds and the restart would kill it mid-call.
_draining = threading.Event()
try:
    from galaxy.web_stack import on_drain_start
except ImportError:  # Galaxy 26.1.0 and 26.1.1 have no drain hook: there a stop cuts a sleeping wait off
    pass
else:
    on_drain_start(_draining.set)


class JobWaiting:
    """Waiting until jobs end, a mixin of ``Jobs`` (needs the manager's ``trans``, ``lookup``, ``jobs_service``,
    ``settings``, and ``output_verdict``, ``creating_job``, ``remedy``, ``repair_hint``, ``invocation_jobs`` and ``invocation_outputs``)."""

    def wait_for_jobs(
        self,
        job_ids: list[str] | None = None,
        dataset_ids: list[str] | None = None,
        history_id: str | None = None,
        timeout_seconds: int = 60,
        invocation_id: str | None = None,
        progress: Callable[[float, float | None, str | None], None] | None = None,
        since_seconds: int = RECENT_SECONDS,
    ) -> dict[str, Any]:
        """Block until every named job is terminal or the (capped) timeout passes.

        With ``invocation_id`` also until Galaxy has scheduled the invocation, watching its
        jobs as they appear (``invocation_jobs`` of the workflows capability). ``progress``
        (mcp.progress) is told (finished, total, message) at the first poll and whenever
        more jobs have finished.
        """
        timeout, capped = wait_budget(timeout_seconds, self.settings.max_wait_seconds)
        since = look_back(since_seconds)
        called_at = datetime.utcnow()  # Galaxy's update_time is naive UTC
        watched, pending_at_call = self._jobs_to_watch(job_ids or [], dataset_ids or [], history_id, invocation_id)
        truncated = len(pending_at_call) >= MAX_WAITED_JOBS
        started = time.monotonic()
        with _sleeping_wait(timeout) as busy:
            try:
                polled = self._poll_watched(watched, 0 if busy else timeout, invocation_id, progress)
                states, timed_out, scheduled = polled
                entries = self._entries_of(watched, states)
                jobs = [entries[job] for job in watched]
                if history_id:
                    paused = self._paused_jobs_of(history_id, set(watched))
                    recent = self._recently_finished(history_id, called_at - timedelta(seconds=since),
                                                     set(watched) | {job for job, _ in paused})
            finally:
                self._end_read_transaction()
        counts: dict[str, int] = {}
        for entry in jobs:
            counts[entry["state"]] = counts.get(entry["state"], 0) + 1
        result: dict[str, Any] = {
            "jobs": jobs,
            "all_terminal": not timed_out,
            "timed_out": timed_out,
            "state_counts": counts,
            "waited_seconds": round(time.monotonic() - started, 1),
            "timeout_applied": timeout,
            "capped": capped,
        }
        if history_id:
            result.update(_history_fields(jobs, [watched[job] for job in pending_at_call], recent, since,
                                          [entry for _, entry in paused]))
        if invocation_id:
            result["invocation_id"] = invocation_id
            result["invocation_scheduled"] = scheduled
            result["invocation_outputs"] = self.invocation_outputs(invocation_id)
        if truncated:
            result["jobs_truncated"] = True
        if busy:
            result["server_busy"] = True
        return result

    def until_job_ends(self, job_id: str, timeout: int) -> bool:
        """Sleep until one already permission-checked job (encoded ``job_id``) is terminal or ``timeout`` passes,
        within the server's bound on sleeping waits; True when it timed out."""
        with _sleeping_wait(timeout) as busy:
            try:
                _, timed_out = self._poll_until_terminal({self.trans.security.decode_id(job_id): job_id},
                                                         0 if busy else timeout)
            finally:
                self._end_read_transaction()
        return timed_out

    # ---- waiting ----

    def _jobs_to_watch(
        self, job_ids: list[str], dataset_ids: list[str], history_id: str | None, invocation_id: str | None = None
    ) -> tuple[dict[int, str], list[int]]:
        """Decoded job id -> encoded id of every job to wait for, each checked once; and the history's
        jobs that were unfinished when the call began."""
        if not (job_ids or dataset_ids or history_id or invocation_id):
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                "Name the jobs to wait for: job_ids, dataset_ids, history_id or invocation_id.",
                "Pass run_tool's `jobs` ids as job_ids, output ids as dataset_ids, a history_id, "
                "or invoke_workflow's `id` as invocation_id.",
            )
        if len(job_ids) + len(dataset_ids) > MAX_WAITED_JOBS:
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                f"One wait tracks at most {MAX_WAITED_JOBS} jobs; "
                f"{len(job_ids) + len(dataset_ids)} ids were given.",
                "Split the ids over several calls, or pass history_id to wait for a whole history.",
            )
        watched: dict[int, str] = {}
        for job_id in job_ids:
            watched.setdefault(self.lookup.job(job_id, argument="job_ids").id, job_id)
        for dataset_id in dataset_ids:
            job = self.creating_job(dataset_id, "dataset_ids")
            watched.setdefault(job.id, self.trans.security.encode_id(job.id))
        running: list[int] = []
        if history_id:
            running = self._running_jobs_of(history_id)
            for job in running:
                watched.setdefault(job, self.trans.security.encode_id(job))
        if invocation_id:
            watched.update({job: encoded for job, encoded in self.invocation_jobs(invocation_id)[0].items() if job not in watched})
        return watched, running

    def _recently_finished(self, history_id: str, since: datetime, listed: set[int]) -> list[dict[str, Any]]:
        """Jobs of the history that ended since ``since`` and are not already listed, newest first."""
        payload = JobIndexPayload(
            history_id=history_id, states=sorted(WAIT_ENDS), date_range_min=since, limit=MAX_RECENT_JOBS
        )
        ended = [job.id for job in self._indexed(payload) if job.id not in listed]
        states = self._job_states(ended) if ended else {}
        encode = self.trans.security.encode_id
        entries = self._entries_of({job: encode(job) for job in ended if job in states}, states)
        return [entries[job] for job in ended if job in states]

    def _paused_jobs_of(self, history_id: str, listed: set[int]) -> list[tuple[int, dict[str, Any]]]:
        """The history's paused jobs, however long ago they paused: a wait counts paused as finished, but a
        survey must never lose the stuck step to its since_seconds window."""
        payload = JobIndexPayload(history_id=history_id, states=["paused"], limit=MAX_RECENT_JOBS)
        paused = [job.id for job in self._indexed(payload) if job.id not in listed]
        states = self._job_states(paused) if paused else {}
        encode = self.trans.security.encode_id
        entries = self._entries_of({job: encode(job) for job in paused if job in states}, states)
        return [(job, entries[job]) for job in paused if job in states]

    def _indexed(self, payload: JobIndexPayload) -> list[Job]:
        """Galaxy's job index for a history the call already looked up for the caller (_running_jobs_of)."""
        return indexed_jobs(self.trans, self.jobs_service.job_manager, payload)

    def _running_jobs_of(self, history_id: str) -> list[int]:
        self.lookup.history(history_id)  # readable by the caller, else a coded error
        # The payload decodes ids itself.
        payload = JobIndexPayload(history_id=history_id, states=STILL_RUNNING, limit=MAX_WAITED_JOBS)
        return [job.id for job in self._indexed(payload)]

    def _poll_watched(
        self,
        watched: dict[int, str],
        timeout: int,
        invocation_id: str | None,
        progress: Callable[[float, float | None, str | None], None] | None,
    ) -> tuple[dict[int, tuple], bool, bool]:
        """``_poll_until_terminal`` of the watched jobs; with an invocation also until Galaxy has scheduled
        it, its jobs joining ``watched`` as they appear. Also whether the invocation was scheduled."""
        scheduled = {"done": True}

        def invocation_scheduled() -> bool:
            found, scheduled["done"] = self.invocation_jobs(invocation_id)
            for job, encoded in found.items():
                watched.setdefault(job, encoded)
            return scheduled["done"]

        states, timed_out = self._poll_until_terminal(
            watched,
            timeout,
            invocation_scheduled if invocation_id else None,
            _ProgressReports(progress, lambda: not scheduled["done"]) if progress else None,
        )
        return states, timed_out, scheduled["done"]

    def _poll_until_terminal(
        self,
        watched: dict[int, str],
        timeout: int,
        also_done: Callable[[], bool] | None = None,
        reports: "_ProgressReports | None" = None,
    ) -> tuple[dict[int, tuple], bool]:
        """The last (state, exit_code, tool_id) of each job, and whether the wait timed out.

        ``also_done`` (checked first, may add jobs to ``watched``) must hold too; ``reports``
        hears of every poll."""
        states: dict[int, tuple[str, int | None, str]] = {}

        def all_terminal() -> bool:
            other = also_done() if also_done else True
            states.update(self._job_states(list(watched)) if watched else {})
            if reports:
                reports.poll([states[job][0] for job in watched])
            return other and all(states[job][0] in WAIT_ENDS for job in watched)

        release = self._end_read_transaction
        timed_out = poll_until(all_terminal, timeout, release=release, sleep=_sleep_unless_draining)
        return states, timed_out

    def _job_states(self, jobs: list[int]) -> dict[int, tuple[str, int | None, str]]:
        """(state, exit_code, tool_id) of already permission-checked jobs, in one query."""
        rows = self.trans.sa_session.execute(
            select(Job.id, Job.state, Job.exit_code, Job.tool_id).where(Job.id.in_(jobs))
        )
        return {row.id: (row.state, row.exit_code, row.tool_id) for row in rows}

    def _entries_of(self, watched: dict[int, str], states: dict[int, tuple]) -> dict[int, dict[str, Any]]:
        """Job id -> its entry, for the ``watched`` jobs (decoded id -> encoded) with their polled ``states``: their
        records read together (operations.jobs.loading), one replacements_of and one record_verdicts for all."""
        records = job_records(self.trans.sa_session, list(watched))
        replaced = self.replacements_of(record for record in records.values() if record.hidden_outputs)
        encode = Memo(self.trans.security.encode_id)
        verdicts = self.record_verdicts(records.values(), encode_id=encode)
        return {job: self._wait_entry(records[job], encoded, *states[job], replaced, verdicts[job], encode)
                for job, encoded in watched.items()}

    def _wait_entry(self, record: JobRecord, encoded: str, state: str, exit_code: int | None, tool_id: str,
                    replaced: dict[int, str], verdict: OutputVerdict, encode: Callable[[int], str]) -> dict[str, Any]:
        """One job's entry; ``replaced`` the replacements_of the jobs read with it that have hidden outputs,
        ``verdict`` its record_verdicts. A paused, failed or flagged job (few) is read as an object for the rest."""
        entry: dict[str, Any] = {
            "job_id": encoded,
            "tool_id": tool_id,
            "state": state,
            "exit_code": exit_code,
            "suspected_silent_failure": False,
        }
        if state == "ok":
            if verdict.empty_outputs:
                entry.update(verdict_fields(verdict))
        elif state == "paused":  # finished for a wait, but not done: say why and what resumes it
            entry.update(self._pause_of(self.trans.sa_session.get(Job, record.id)))
        failed_outputs = [encode(dataset_id) for dataset_id in record.failed_outputs] if state == "ok" else []
        if failed_outputs:  # an output can fail after its job ended ok (an upload's datatype check)
            entry["failed_outputs"] = failed_outputs
        if entry["suspected_silent_failure"] or failed_outputs or state in ("error", "failed"):
            job = self.trans.sa_session.get(Job, record.id)
            if stderr := stderr_head(job):  # the tool's own words, often the whole story: no get_job_errors needed
                entry["tool_stderr_head"] = stderr
            entry.update(self.remedy(job))
        elif record.hidden_outputs and (replacer := replaced.get(record.id)):  # an ok result replaced where it was
            entry["replaced_by"] = replacer
        return entry

    def _pause_of(self, job: Job) -> dict[str, Any]:
        encode = self.trans.security.encode_id
        info = next((a.dataset.info for a in job.output_datasets if a.dataset is not None and a.dataset.info), None)
        errored = [
            {
                "dataset_id": encode(a.dataset.id),
                "name": a.dataset.name,
                "job_id": encode(a.dataset.creating_job.id) if a.dataset.creating_job else None,
            }
            for a in job.input_datasets
            if a.dataset is not None and a.dataset.state == "error"
        ]
        creator = next((a.dataset.creating_job for a in job.input_datasets
                        if a.dataset is not None and a.dataset.state == "error" and a.dataset.creating_job), None)
        repair = self.repair_hint(creator) if creator is not None else None
        return paused_explanation(info, errored, repair, encode(job.id))

    def _end_read_transaction(self) -> None:
        """Give the database connection back while nothing needs it.

        The call's SQLAlchemy session (one per MCP call, closed when the call ends)
        keeps its connection, and on PostgreSQL an open transaction, from its first
        query to its end: for a whole wait, unless released between polls. Nothing
        here writes, so ending the transaction loses nothing, and the expired
        objects reload fresh on the next poll.
        """
        self.trans.sa_session.rollback()


class _ProgressReports:
    """Progress notifications of one wait: the first poll, then each poll where more jobs finished
    (MCP requires a notification's progress to increase)."""

    def __init__(self, report: Callable[[float, float | None, str | None], None], scheduling: Callable[[], bool]):
        self.report = report
        self.scheduling = scheduling
        self.last: int | None = None

    def poll(self, states: list[str]) -> None:
        finished, total, message = progress_of(states, WAIT_ENDS, scheduling=self.scheduling())
        if self.last is None or finished > self.last:
            self.last = finished
            self.report(finished, total, message)


def _history_fields(jobs: list[dict[str, Any]], pending: list[str], recent: list[dict[str, Any]], since: int,
                    paused: list[dict[str, Any]]):
    """What a wait by history adds: the jobs unfinished when it began (encoded ids: ``pending``), those that
    ended shortly before, its paused jobs whatever their age, their states counted together, and a word when
    nothing was pending."""
    by_id = {entry["job_id"]: entry for entry in jobs}
    fields: dict[str, Any] = {
        "pending_at_call": [by_id[job] for job in pending],
        "recently_finished": recent,
        "since_seconds": since,
    }
    if paused:
        fields["paused"] = paused
    # One count over all three lists: a job that ended just before the call is in recently_finished, not jobs.
    listed = {entry["job_id"]: entry for entry in [*recent, *paused, *fields["pending_at_call"]]}
    fields["history_state_counts"] = dict(Counter(entry["state"] for entry in listed.values()))
    fields["needs_attention"] = needing_attention(listed.values())
    if not pending:
        stuck = f"; {len(paused)} paused job(s) wait for a failed input to be fixed (paused)" if paused else ""
        fields["nothing_pending"] = (
            f"No job of this history was running or queued when the call began{stuck}; recently_finished lists "
            f"the jobs that ended in the {since} s before it (up to {MAX_RECENT_JOBS}, newest first)."
        )
    return fields


def _sleep_unless_draining(seconds: float) -> None:
    if _draining.wait(seconds):
        raise AnalysisError(
            ErrorCode.NOT_READY,
            "Galaxy is shutting down (a restart or redeploy), so this wait_for_jobs call ended early; "
            "the jobs keep running or resume under Galaxy's control and lose nothing.",
            "Call wait_for_jobs again with the same ids once the server answers (connect or get_server_info).",
        )


@contextmanager
def _sleeping_wait(timeout: int):
    """Yields whether the server is too busy for this wait to sleep (then it checks once)."""
    granted = timeout > 0 and _sleeping_waits.acquire(blocking=False)
    try:
        yield timeout > 0 and not granted
    finally:
        if granted:
            _sleeping_waits.release()
