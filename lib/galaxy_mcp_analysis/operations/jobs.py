"""Debugging jobs: ``get_job_errors``, silent-failure flags, ``wait_for_jobs`` (field report gap 4).

Galaxy already records a job's tool and job stdout/stderr; stock MCP had no way
to read them by job, and nothing noticed a job that finished ``ok`` with empty
outputs. Permission checks are Galaxy's (``JobManager.get_accessible_job``,
``HDAManager.get_accessible``, ``HistoryManager.get_accessible``), the log view is
Galaxy's REST view of a job (so ``command_line`` appears exactly where Galaxy
shows it), and the rules live in ``core.job_logs`` and ``core.waiting``.
"""

import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from datetime import (
    datetime,
    timedelta,
)
from typing import Any

from galaxy.managers.jobs import view_show_job
from galaxy.model import Job
from galaxy.schema.schema import JobState
from galaxy.webapps.galaxy.services.jobs import JobIndexPayload
from sqlalchemy import select

from galaxy_mcp_analysis.core.job_logs import (
    declared_output,
    excerpt,
    judge_outputs,
    JobOutput,
    log_budget,
    OutputVerdict,
)
from galaxy_mcp_analysis.core.waiting import (
    look_back,
    paused_explanation,
    poll_until,
    progress_of,
    RECENT_SECONDS,
    wait_budget,
)
from galaxy_mcp_analysis.core.errors import (
    AnalysisError,
    ErrorCode,
)

#: The logs get_job_errors returns, each cut to the byte budget on its own.
LOG_FIELDS = ("info", "tool_stderr", "tool_stdout", "job_stderr", "job_stdout")
#: States a wait ends on: Galaxy's Job.is_terminal states, plus "failed" (a job Galaxy could not start).
WAIT_ENDS = frozenset({"ok", "error", "deleted", "skipped", "paused", "stopped", "failed"})
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


class DebuggingJobs:
    """Operations mixin of AnalysisOperationsManager (needs its ``app``, ``trans``, ``hda_manager``,
    ``jobs_service``, ``settings``)."""

    def get_job_errors(
        self, *, job_id: str | None = None, dataset_id: str | None = None, max_bytes: int = 4000
    ) -> dict[str, Any]:
        """A job's logs, exit code and output verdict, keyed by the job or by a dataset it created.

        Keyword-only: Galaxy's own signature was ``get_job_errors(dataset_id)``, and a
        dataset id passed positionally must not be read as a job id.
        """
        budget, capped = log_budget(max_bytes, self.settings.max_read_bytes)
        job = self._job_named_by(job_id, dataset_id)
        logs = {field: excerpt(getattr(job, field), budget) for field in LOG_FIELDS}
        verdict = self.output_verdict(job)
        result: dict[str, Any] = {
            "job_id": self.trans.security.encode_id(job.id),
            "history_id": self.trans.security.encode_id(job.history_id) if job.history_id else None,
            "tool_id": job.tool_id,
            "tool_version": job.tool_version,
            "state": job.state,
            "exit_code": job.exit_code,
            **{field: log.text for field, log in logs.items()},
            "truncated": any(log.truncated for log in logs.values()),
            "job_messages": job.job_messages or [],
            "empty_outputs": verdict.empty_outputs,
            "suspected_silent_failure": verdict.suspected_silent_failure,
            **self._output_states(job, budget),
            "max_bytes_applied": budget,
            "capped": capped,
        }
        # Galaxy's REST view of the job decides: admins, or everyone with expose_dataset_path.
        if (command_line := view_show_job(self.trans, job, full=False).get("command_line")) is not None:
            command = excerpt(command_line, budget)
            result["command_line"] = command.text
            result["truncated"] = result["truncated"] or command.truncated
        if dataset_id:
            result["dataset_id"] = dataset_id
        if repair := self.repair_hint(job):
            result["repair"] = repair
        return result

    def _output_states(self, job: Job, budget: int) -> dict[str, Any]:
        """Each output dataset's own state and Galaxy's message on it: a dataset can fail after its job
        succeeded (an upload's datatype check, metadata), and that message is the evidence."""
        encode = self.trans.security.encode_id
        outputs = []
        for association in job.output_datasets:
            hda = association.dataset
            if hda is None:
                continue
            entry: dict[str, Any] = {"name": association.name, "dataset_id": encode(hda.id), "state": hda.state}
            if hda.info:
                entry["message"] = excerpt(hda.info, budget).text
            outputs.append(entry)
        failed = [entry for entry in outputs if entry["state"] in ("error", "failed_metadata", "paused")]
        return {"outputs": outputs, "failed_outputs": failed}

    def get_job_status(self, job_id: str) -> dict[str, Any]:
        """Galaxy's job status plus the silent-failure verdict (this changes the stock tool too)."""
        status = super().get_job_status(job_id)
        verdict = self.output_verdict(self.lookup.job(job_id))
        status["empty_outputs"] = verdict.empty_outputs
        status["suspected_silent_failure"] = verdict.suspected_silent_failure
        return status

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
        scheduled = {"done": True}

        def invocation_scheduled() -> bool:
            found, scheduled["done"] = self.invocation_jobs(invocation_id)
            for job, encoded in found.items():
                watched.setdefault(job, encoded)
            return scheduled["done"]

        with _sleeping_wait(timeout) as busy:
            try:
                states, timed_out = self._poll_until_terminal(
                    watched,
                    0 if busy else timeout,
                    invocation_scheduled if invocation_id else None,
                    _ProgressReports(progress, lambda: not scheduled["done"]) if progress else None,
                )
                jobs = [self._wait_entry(job, encoded, *states[job]) for job, encoded in watched.items()]
                if history_id:
                    recent = self._recently_finished(history_id, called_at - timedelta(seconds=since), set(watched))
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
            by_id = {entry["job_id"]: entry for entry in jobs}
            result["pending_at_call"] = [by_id[watched[job]] for job in pending_at_call]
            result["recently_finished"] = recent
            result["since_seconds"] = since
            if not pending_at_call:
                result["nothing_pending"] = (
                    f"No job of this history was unfinished when the call began; recently_finished lists the "
                    f"jobs that ended in the {since} s before it (up to {MAX_RECENT_JOBS}, newest first)."
                )
        if invocation_id:
            result["invocation_id"] = invocation_id
            result["invocation_scheduled"] = scheduled["done"]
        if truncated:
            result["jobs_truncated"] = True
        if busy:
            result["server_busy"] = True
        return result

    # ---- which job ----

    def _job_named_by(self, job_id: str | None, dataset_id: str | None) -> Job:
        if bool(job_id) == bool(dataset_id):
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                f"Pass exactly one of job_id or dataset_id (got {'both' if job_id else 'neither'}).",
                "Use job_id from run_tool's `jobs` or wait_for_jobs, or dataset_id of an output "
                "(get_history_contents) to get the job that created it.",
            )
        if job_id:
            return self.lookup.job(job_id)
        return self._creating_job(dataset_id)

    def _creating_job(self, dataset_id: str, argument: str = "dataset_id") -> Job:
        hda = self.lookup.dataset(
            dataset_id,
            argument=argument,
            denied_hint="Debug only your own datasets or ones shared with you (get_history_contents(history_id)).",
        )
        job = hda.creating_job
        if job is None:
            raise AnalysisError(
                ErrorCode.NOT_FOUND,
                f"Dataset {dataset_id} ({hda.name!r}) has no job that created it.",
                "Only tool outputs and uploads have a creating job; check the id with get_dataset_details.",
            )
        return self.lookup.job(self.trans.security.encode_id(job.id))

    # ---- silent failures ----

    def output_verdict(self, job: Job) -> OutputVerdict:
        """Whether the job's outputs look like a silent failure (finished ok, a required output empty)."""
        tool = self.app.toolbox.get_tool(
            job.tool_id,
            job.tool_version,
            tool_uuid=job.dynamic_tool.uuid if job.dynamic_tool else None,
            user=self.trans.user,
        )
        encode_id = self.trans.security.encode_id
        return judge_outputs(job.state, [job_output(output, tool, encode_id) for output in job.output_datasets])

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
            job = self._creating_job(dataset_id, "dataset_ids")
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
        ended = [job["id"] for job in self.jobs_service.index(self.trans, payload) if job["id"] not in listed]
        states = self._job_states(ended) if ended else {}
        encode = self.trans.security.encode_id
        return [self._wait_entry(job, encode(job), *states[job]) for job in ended if job in states]

    def _running_jobs_of(self, history_id: str) -> list[int]:
        self.lookup.history(history_id)  # readable by the caller, else a coded error
        # The payload decodes ids itself.
        payload = JobIndexPayload(history_id=history_id, states=STILL_RUNNING, limit=MAX_WAITED_JOBS)
        return [job["id"] for job in self.jobs_service.index(self.trans, payload)]

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

    def _wait_entry(self, job: int, encoded: str, state: str, exit_code: int | None, tool_id: str) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "job_id": encoded,
            "tool_id": tool_id,
            "state": state,
            "exit_code": exit_code,
            "suspected_silent_failure": False,
        }
        if state == "ok":
            verdict = self.output_verdict(self.trans.sa_session.get(Job, job))
            entry["suspected_silent_failure"] = verdict.suspected_silent_failure
            if verdict.empty_outputs:
                entry["empty_outputs"] = verdict.empty_outputs
        elif state == "paused":  # finished for a wait, but not done: say why and what resumes it
            entry.update(self._pause_of(self.trans.sa_session.get(Job, job)))
        if entry["suspected_silent_failure"] or state in ("error", "failed"):
            entry["repair"] = self.repair_hint(self.trans.sa_session.get(Job, job))
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
        return paused_explanation(info, errored)

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


def job_output(association, tool, encode_id: Callable[[int], str]) -> JobOutput:
    """One of a job's output datasets (a JobToOutputDatasetAssociation) as the rule's plain data.

    ``tool`` is the job's tool as Galaxy loaded it; without it (uninstalled since)
    every output counts as required.
    """
    hda = association.dataset
    output_name, discovered = declared_output(association.name)
    declared = (tool.outputs.get(output_name) or tool.output_collections.get(output_name)) if tool else None
    file_size = hda.dataset.file_size  # a Decimal in Galaxy's model
    return JobOutput(
        name=association.name,
        dataset_id=encode_id(hda.id),
        size=None if hda.purged or hda.dataset.purged or file_size is None else int(file_size),
        optional=declared is not None and bool(declared.filters),
        discovered=discovered or (declared is not None and _discovers_datasets(declared)),
    )


def _discovers_datasets(declared) -> bool:
    """Whether a tool output (dataset or collection) is filled by discover_datasets at run time."""
    if declared.collection:
        return declared.dynamic_structure
    return bool(declared.dataset_collector_descriptions)
