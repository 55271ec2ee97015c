"""What a task is made of and what ``tasks/get``, ``tasks/update`` and ``tasks/cancel`` answer.

Each function runs in a worker thread with a database session of its own (``mcp.session.in_own_session``):
the credential of the request (the ``x-api-key`` header, or a sign-in's token) becomes its Galaxy user as
for any tool call (``mcp.caller``), the task is that user's row of ``store`` and its jobs are read and
stopped as that user (``operations.jobs.tasks``). An unknown handle, another user's and an unknown
credential all get the same ``TaskNotFound``, so no one learns whether someone else's handle exists.
"""

import time
from collections.abc import Callable
from typing import Any

from galaxy_mcp_analysis.core.tasks import (
    created_answer,
    detailed_answer,
    expired,
    failed_state,
    new_task_id,
    storage_key,
    task_state,
    TaskState,
    TaskTimes,
    TERMINAL_STATUSES,
    well_formed,
)
from galaxy_mcp_analysis.core.errors import AnalysisError
from galaxy_mcp_analysis.mcp.caller import user_for_credential
from galaxy_mcp_analysis.mcp.declaration import operations_for_user
from galaxy_mcp_analysis.tasks.store import (
    StoredTask,
    TaskStore,
)

NOT_FOUND = ("Failed to retrieve task: Task not found (a task is asked for with the credential of the call that "
             "made it: the same x-api-key header or sign-in).")
EXPIRED = "Failed to retrieve task: Task has expired."


class TaskNotFound(Exception):
    """Answered as JSON-RPC -32602 (Invalid params), as the extension asks."""


class TaskService:
    def __init__(self, gx_app, store: TaskStore, lifetime_seconds: int,
                 cancel_refusal: Callable[[str | None], AnalysisError | None] = lambda credential: None):
        """``cancel_refusal``: the admin's policy for ``cancel_job``, whose work ``tasks/cancel`` does."""
        self.gx_app = gx_app
        self.store = store
        self.lifetime = lifetime_seconds
        self.cancel_refusal = cancel_refusal

    def open(self, credential: str, tool: str, job_ids: list[str], invocation_ids: list[str],
             result: dict[str, Any]) -> dict[str, Any] | None:
        """The answer handing out a new task for the jobs (and invocations) a call started, or None when the
        call's own answer should go out as it is (all has already ended, or a job cannot be read)."""
        user = self._user(credential)
        if user is None:
            return None
        now = time.time()
        pending = StoredTask(tool, job_ids, invocation_ids, result, now, now + self.lifetime, None)
        state, _times = self._state(user, pending)
        if state.status != "working":
            return None  # a quick call: no handle to poll for what is already there (or a job Galaxy lacks)
        task_id = new_task_id()
        stored = self.store.add(storage_key(task_id), user.id, tool, job_ids, invocation_ids, result, self.lifetime)
        return created_answer(task_id, state, TaskTimes(stored.created_at, stored.created_at, stored.expires_at))

    def get(self, credential: str | None, task_id: str) -> dict[str, Any]:
        user, stored = self._task(credential, task_id)
        state, times = self._state(user, stored)
        return detailed_answer(task_id, state, times, stored.result)

    def cancel(self, credential: str | None, task_id: str) -> dict[str, Any]:
        """Galaxy's stop of the task's unfinished jobs; an ended task stays as it ended. The answer on the wire is
        empty; this returns what the audit line records: the user, the task's tool, the jobs stopped and the
        invocations cancelled, or the admin's ``refusal`` (then nothing was stopped)."""
        user, stored = self._task(credential, task_id)
        done = {"user_id": self.gx_app.security.encode_id(user.id), "tool": stored.tool, "job_ids": [],
                "invocation_ids": []}
        refusal = self.cancel_refusal(credential)
        if refusal is not None:  # nothing is stopped; the caller raises it after the audit line
            return {**done, "refusal": refusal}
        state, _times = self._state(user, stored)
        if state.status not in TERMINAL_STATUSES:
            self.store.mark_cancelled(storage_key(task_id), user.id)
            ops = operations_for_user(self.gx_app, user)
            done["invocation_ids"] = ops.cancel_task_invocations(stored.invocation_ids)
            invocation_jobs, _scheduling, _cancelled = ops.task_invocations(stored.invocation_ids)
            stopped = ops.cancel_task_jobs(_union(stored.job_ids, invocation_jobs))["stopped"]
            done["job_ids"] = [entry["job_id"] for entry in stopped]
            self.gx_app.model.session.commit()
        return done

    def update(self, credential: str | None, task_id: str) -> dict[str, Any]:
        """No task of this server asks for input, so no response is outstanding: each one is ignored, as the
        extension says of responses to keys that are not outstanding."""
        self._task(credential, task_id)
        return {}

    def _user(self, credential: str | None):
        try:
            return user_for_credential(self.gx_app, credential)
        except Exception:  # Galaxy's refusal of an unknown or deleted key
            return None

    def _task(self, credential: str | None, task_id: str) -> tuple[Any, StoredTask]:
        user = self._user(credential) if well_formed(task_id) else None
        stored = self.store.find(storage_key(task_id), user.id) if user is not None else None
        if stored is None:
            raise TaskNotFound(NOT_FOUND)
        if expired(stored.expires_at, time.time()):
            raise TaskNotFound(EXPIRED)
        return user, stored

    def _state(self, user, stored: StoredTask) -> tuple[TaskState, TaskTimes]:
        ops = operations_for_user(self.gx_app, user)
        invocation_jobs, scheduling, invocation_cancelled = ops.task_invocations(stored.invocation_ids)
        job_ids = _union(stored.job_ids, invocation_jobs)
        states = ops.task_job_states(job_ids)
        changed = [changed for _state, changed in states.values()] + [stored.cancelled_at or 0.0]
        times = TaskTimes(stored.created_at, max(changed), stored.expires_at)
        missing = [job for job in job_ids if job not in states]
        if missing:
            return failed_state(f"Galaxy no longer has job(s) {', '.join(missing)} of this task."), times
        job_states = [states[job][0] for job in job_ids]
        age = time.time() - stored.created_at
        return task_state(job_states, stored.cancelled_at is not None, age, scheduling=scheduling,
                          invocation_cancelled=invocation_cancelled), times


def _union(first: list[str], second: list[str]) -> list[str]:
    return first + [item for item in second if item not in first]
