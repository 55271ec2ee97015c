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
from typing import (
    Any,
    NamedTuple,
)

from galaxy.model import Job
from galaxy.schema.schema import JobState
from sqlalchemy import (
    and_,
    bindparam,
    or_,
    select,
)

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
    JOB_COLUMNS,
    job_columns,
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
#: A history's jobs a wait by history reads: unfinished, paused (however old), or ended since the look-back.
WATCHED_OR_STUCK = [*STILL_RUNNING, "paused"]
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


#: The statement of JobWaiting._history_jobs, built once (its construction cost more than its execution).
HISTORY_JOBS = (
    select(*JOB_COLUMNS)
    .where(Job.history_id == bindparam("history"))
    .where(or_(Job.state.in_(WATCHED_OR_STUCK), and_(
        Job.state.in_(sorted(WAIT_ENDS)), Job.update_time >= bindparam("cutoff", type_=Job.update_time.type))))
    .order_by(Job.update_time.desc())
)


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
        cutoff = datetime.utcnow() - timedelta(seconds=since)  # Galaxy's update_time is naive UTC
        watch = self._jobs_to_watch(job_ids or [], dataset_ids or [], history_id, invocation_id, cutoff)
        watched, pending_at_call = watch.watched, watch.pending_at_call
        truncated = len(pending_at_call) >= MAX_WAITED_JOBS
        started = time.monotonic()
        with _sleeping_wait(timeout) as busy:
            try:
                polled = self._poll_watched(watched, 0 if busy else timeout, invocation_id, progress, watch.known)
                heads, timed_out, scheduled, polls = polled
                entries = self._entries_of(watched, heads)
                jobs = [entries[job] for job in watched]
                if history_id:
                    # Read when the call began; again only if the wait slept (jobs may have ended or paused since).
                    history_jobs = watch.history_jobs if polls == 1 else self._history_jobs(watch.history, cutoff)
                    paused, recent = self._paused_and_recent(history_jobs, set(watched), cutoff)
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
            result.update(_history_fields(jobs, [watched[job] for job in pending_at_call], recent, since, paused))
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
                _, timed_out, _ = self._poll_until_terminal({self.trans.security.decode_id(job_id): job_id},
                                                            0 if busy else timeout)
            finally:
                self._end_read_transaction()
        return timed_out

    # ---- waiting ----

    def _jobs_to_watch(
        self, job_ids: list[str], dataset_ids: list[str], history_id: str | None, invocation_id: str | None,
        cutoff: datetime,
    ) -> "_Watch":
        """Every job to wait for, each checked once, with what was read of them on the way (_Watch)."""
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
        known: dict[int, Any] = {}
        for job_id in job_ids:
            job = self.lookup.job(job_id, argument="job_ids")
            watched.setdefault(job.id, job_id)
            known[job.id] = job_columns(job)
        for dataset_id in dataset_ids:
            job = self.creating_job(dataset_id, "dataset_ids")
            watched.setdefault(job.id, self.trans.security.encode_id(job.id))
            known[job.id] = job_columns(job)
        running: list[int] = []
        history, history_jobs = None, []
        if history_id:
            history = self.lookup.history(history_id).id  # readable by the caller, else a coded error
            history_jobs = self._history_jobs(history, cutoff)
            running = [job.id for job in history_jobs if job.state in STILL_RUNNING][:MAX_WAITED_JOBS]
            known.update({job.id: job for job in history_jobs})
            for job in running:
                watched.setdefault(job, self.trans.security.encode_id(job))
        if invocation_id:
            watched.update({job: encoded for job, encoded in self.invocation_jobs(invocation_id)[0].items() if job not in watched})
        return _Watch(watched, running, known, history, history_jobs)

    def _history_jobs(self, history: int, cutoff: datetime) -> list[Any]:
        """The jobs of a history the call looked up for the caller that a wait by history reports: unfinished,
        paused however long ago, or ended since ``cutoff``; their columns (JOB_COLUMNS), the most recently
        updated first, as Galaxy's job index orders them. One query, where three pages of Galaxy's job index
        (``JobManager.index_query``, which leaves the history's access to its caller as this does) took three."""
        return list(self.trans.sa_session.execute(HISTORY_JOBS, {"history": history, "cutoff": cutoff}))

    def _paused_and_recent(
        self, history_jobs: list[Any], listed: set[int], cutoff: datetime
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The entries of the history's paused jobs, however long ago they paused (a wait counts paused as
        finished, but a survey must never lose the stuck step to its since_seconds window), and of those that
        ended since ``cutoff``, newest first; each up to MAX_RECENT_JOBS, none of them already ``listed``."""
        paused = [job for job in history_jobs if job.state == "paused"][:MAX_RECENT_JOBS]
        paused = [job for job in paused if job.id not in listed]
        ended = [job for job in history_jobs if job.state in WAIT_ENDS and job.update_time >= cutoff]
        ended = [job for job in ended[:MAX_RECENT_JOBS] if job.id not in listed | {job.id for job in paused}]
        encode = self.trans.security.encode_id
        heads = {job.id: job for job in [*paused, *ended]}
        entries = self._entries_of({job: encode(job) for job in heads}, heads)
        return [entries[job.id] for job in paused], [entries[job.id] for job in ended]

    def _poll_watched(
        self,
        watched: dict[int, str],
        timeout: int,
        invocation_id: str | None,
        progress: Callable[[float, float | None, str | None], None] | None,
        known: dict[int, Any],
    ) -> tuple[dict[int, Any], bool, bool, int]:
        """``_poll_until_terminal`` of the watched jobs; with an invocation also until Galaxy has scheduled
        it, its jobs joining ``watched`` as they appear. Also whether the invocation was scheduled."""
        scheduled = {"done": True}

        def invocation_scheduled() -> bool:
            found, scheduled["done"] = self.invocation_jobs(invocation_id)
            for job, encoded in found.items():
                watched.setdefault(job, encoded)
            return scheduled["done"]

        heads, timed_out, polls = self._poll_until_terminal(
            watched,
            timeout,
            invocation_scheduled if invocation_id else None,
            _ProgressReports(progress, lambda: not scheduled["done"]) if progress else None,
            known,
        )
        return heads, timed_out, scheduled["done"], polls

    def _poll_until_terminal(
        self,
        watched: dict[int, str],
        timeout: int,
        also_done: Callable[[], bool] | None = None,
        reports: "_ProgressReports | None" = None,
        known: dict[int, Any] | None = None,
    ) -> tuple[dict[int, Any], bool, int]:
        """The columns (JOB_COLUMNS) of each job at the last poll, whether the wait timed out, and how many
        polls it took.

        ``also_done`` (checked first, may add jobs to ``watched``) must hold too; ``reports``
        hears of every poll. ``known``: the columns of jobs just read by the call, the first poll's answer
        when they cover every watched job (no second read of what the call read a moment ago)."""
        heads: dict[int, Any] = {}
        polls = 0

        def all_terminal() -> bool:
            nonlocal polls
            other = also_done() if also_done else True
            if not polls and known is not None and all(job in known for job in watched):
                heads.update({job: known[job] for job in watched})
            elif watched:
                heads.update(self._job_heads(list(watched)))
            polls += 1
            if reports:
                reports.poll([heads[job].state for job in watched])
            return other and all(heads[job].state in WAIT_ENDS for job in watched)

        release = self._end_read_transaction
        timed_out = poll_until(all_terminal, timeout, release=release, sleep=_sleep_unless_draining)
        return heads, timed_out, polls

    def _job_heads(self, jobs: list[int]) -> dict[int, Any]:
        """The columns (JOB_COLUMNS) of already permission-checked jobs, in one query."""
        rows = self.trans.sa_session.execute(select(*JOB_COLUMNS).where(Job.id.in_(jobs)))
        return {row.id: row for row in rows}

    def _entries_of(self, watched: dict[int, str], heads: dict[int, Any]) -> dict[int, dict[str, Any]]:
        """Job id -> its entry, for the ``watched`` jobs (decoded id -> encoded) with their polled columns
        (``heads``): their records read together (operations.jobs.loading), one replacements_of and one
        record_verdicts for all."""
        records = job_records(self.trans.sa_session, [heads[job] for job in watched])
        replaced = self.replacements_of(record for record in records.values()
                                        if record.has_ended and record.hidden_outputs)
        encode = Memo(self.trans.security.encode_id)
        verdicts = self.record_verdicts(records.values(), encode_id=encode)
        return {job: self._wait_entry(records[job], encoded, replaced, verdicts[job], encode)
                for job, encoded in watched.items()}

    def _wait_entry(self, record: JobRecord, encoded: str, replaced: dict[int, str], verdict: OutputVerdict,
                    encode: Callable[[int], str]) -> dict[str, Any]:
        """One job's entry; ``replaced`` the replacements_of the jobs read with it that may have been replaced,
        ``verdict`` its record_verdicts. A paused, failed or flagged job (few) is read as an object for the rest."""
        state = record.state
        entry: dict[str, Any] = {
            "job_id": encoded,
            "tool_id": record.tool_id,
            "state": state,
            "exit_code": record.exit_code,
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
        elif replacer := replaced.get(record.id):  # an ok result replaced where it was
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


class _Watch(NamedTuple):
    """What a wait found to watch: decoded job id -> encoded id of each job (``watched``), the history's jobs
    unfinished when the call began (``pending_at_call``), the columns already read of watched jobs (``known``),
    and for a wait by history the history (decoded) and its jobs as _history_jobs read them."""

    watched: dict[int, str]
    pending_at_call: list[int]
    known: dict[int, Any]
    history: int | None
    history_jobs: list[Any]


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
