"""The Galaxy side of MCP tasks: the states of a task's jobs and invocations, and stopping them (rules: ``core.tasks``).

A task's jobs are the ones its call started for this user (run_tool's ``jobs``, ...), so they were the
caller's when the task was made; each read still asks only for jobs of the caller's own (``Job.user_id``).
Stopping goes through ``cancel_job`` (Galaxy's ``JobManager.stop``, as the MCP tool does).
"""

from datetime import timezone
from typing import Any

from galaxy.model import Job
from sqlalchemy import select

from galaxy_mcp_analysis.core.errors import AnalysisError
from galaxy_mcp_analysis.core.waiting import WAIT_ENDS


#: Invocation states of a cancelled workflow run.
CANCELLED_INVOCATION_STATES = ("cancelling", "cancelled")
#: Every step scheduled; Galaxy still cancels it (its steps' unfinished jobs), unlike a failed or cancelled one.
SCHEDULED_INVOCATION_STATE = "scheduled"


class TaskJobs:
    """Operations mixin of ``Jobs`` (needs the manager's ``trans``, ``lookup``, ``cancel_job``, and the workflows'
    ``invocation_jobs`` and Galaxy's ``cancel_workflow_invocation``)."""

    def task_job_states(self, job_ids: list[str]) -> dict[str, tuple[str, float]]:
        """Each job's state and last change (seconds since the epoch), in one query; a job Galaxy no longer
        has, or that is not the caller's, is absent."""
        decode = self.trans.security.decode_id
        encoded = {decode(job_id): job_id for job_id in job_ids}
        rows = self.trans.sa_session.execute(
            select(Job.id, Job.state, Job.update_time).where(Job.id.in_(list(encoded)), Job.user_id == self.trans.user.id)
        )
        return {encoded[row.id]: (row.state, _epoch(row.update_time)) for row in rows}

    def cancel_task_jobs(self, job_ids: list[str]) -> dict[str, Any]:
        """Galaxy's stop of each job that has not ended; one that ended meanwhile is left as it is."""
        stopped, ended = [], []
        for job_id, (state, _changed) in self.task_job_states(job_ids).items():
            if state in WAIT_ENDS:
                ended.append(job_id)
                continue
            try:
                stopped.append(self.cancel_job(job_id))
            except AnalysisError:  # it ended between the read and the stop: nothing to do
                ended.append(job_id)
        return {"stopped": stopped, "ended": ended}


    def task_invocations(self, invocation_ids: list[str]) -> tuple[list[str], bool, bool]:
        """The jobs the invocations have made so far (encoded ids), whether Galaxy still schedules one of them
        (``wait_for_jobs``' rule), whether one was cancelled."""
        jobs: list[str] = []
        scheduling = cancelled = False
        for invocation_id in invocation_ids:
            found, scheduled = self.invocation_jobs(invocation_id)
            jobs += [job_id for job_id in found.values() if job_id not in jobs]
            scheduling = scheduling or not scheduled
            cancelled = cancelled or self.lookup.invocation(invocation_id).state in CANCELLED_INVOCATION_STATES
        return jobs, scheduling, cancelled

    def cancel_task_invocations(self, invocation_ids: list[str]) -> list[str]:
        """Galaxy's cancel of each invocation still scheduling or whose steps are all scheduled (its jobs may
        still wait: Galaxy's cancel takes those too); their jobs so far are stopped with the task's
        (``cancel_task_jobs``), the later ones Galaxy's scheduler never makes. Returns those it cancelled."""
        cancelled = []
        for invocation_id in invocation_ids:
            invocation = self.lookup.invocation(invocation_id)
            if invocation.active or invocation.state == SCHEDULED_INVOCATION_STATE:
                self.cancel_workflow_invocation(invocation_id)
                cancelled.append(invocation_id)
        return cancelled


def _epoch(naive_utc) -> float:
    """Galaxy's update_time is naive UTC."""
    return naive_utc.replace(tzinfo=timezone.utc).timestamp() if naive_utc is not None else 0.0
