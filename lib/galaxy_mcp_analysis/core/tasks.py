"""The rules of MCP tasks: the ``io.modelcontextprotocol/tasks`` extension (SEP-2663, revision 2026-07-28).

A task stands for the Galaxy jobs one ``tools/call`` started. Its status is read off those jobs'
states each time it is asked for (Galaxy's database holds them, for every worker and across restarts);
what the call answered is kept with the task and is its result once the jobs have ended. The task id is
a random handle the client holds; only its SHA-256 is stored (``storage_key``). Wire shapes: the answer
to the call (``created_answer``) and to ``tasks/get`` (``detailed_answer``), as doc/clients.md shows them.
"""

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import (
    datetime,
    timezone,
)
from typing import Any

from galaxy_mcp_analysis.core.waiting import (
    progress_of,
    WAIT_ENDS,
)

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
#: The tools whose call may answer with a task: each starts Galaxy jobs and names them (the ``jobs`` effect of
#: its row of the facts table) or the workflow invocation that makes them (``created`` invocations) in its
#: result. A call whose jobs have all ended (and invocation scheduled) by the answer gets no task.
#: (Not upload_file_from_url: Galaxy runs uploads in Celery, where its job stop does not reach them.)
TASK_TOOLS = frozenset({"run_tool", "rerun_job", "create_collection", "invoke_workflow"})
STATUSES = ("working", "input_required", "completed", "failed", "cancelled")
TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})
#: Job states of a job taken out of the run (tasks/cancel, or the person in Galaxy's own pages).
REMOVED_JOB_STATES = frozenset({"deleted", "stopped"})
#: JSON-RPC error codes the extension uses (SEP-2663 "Error Handling").
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

_TASK_ID = re.compile(r"[A-Za-z0-9_-]{43}")  # secrets.token_urlsafe(32)


def new_task_id() -> str:
    """A handle no one can guess: 256 random bits (the spec's "sufficient entropy")."""
    return secrets.token_urlsafe(32)


def well_formed(task_id: Any) -> bool:
    return isinstance(task_id, str) and _TASK_ID.fullmatch(task_id) is not None


def storage_key(task_id: str) -> str:
    """What the database keeps of a handle: a copy of the table names no task a client could ask for."""
    return hashlib.sha256(task_id.encode()).hexdigest()


@dataclass(frozen=True)
class TaskState:
    status: str
    message: str
    #: None once the task has ended (nothing more to poll for).
    poll_interval_ms: int | None


#: The polling interval a task suggests: a tenth of its age, between these bounds in seconds, the
#: first pair while a job runs, the second while every unfinished job waits (new, queued, ...).
RUNNING_POLL_BOUNDS = (1.0, 30.0)
QUEUED_POLL_BOUNDS = (2.0, 60.0)


def poll_interval_ms(job_states: list[str], age_seconds: float) -> int:
    """A job's end is seen within about a tenth of the time it took; a day-long run is polled twice a minute."""
    low, high = RUNNING_POLL_BOUNDS if "running" in job_states else QUEUED_POLL_BOUNDS
    return int(min(max(age_seconds / 10, low), high) * 1000)


def task_state(job_states: list[str], cancel_requested: bool, age_seconds: float, *, scheduling: bool = False,
               invocation_cancelled: bool = False) -> TaskState:
    """The task's status from its jobs' states (and its invocations'): working while one job has not ended
    (Galaxy's ended states, as ``wait_for_jobs``) or Galaxy is still scheduling an invocation; then cancelled if
    a job or invocation was taken out after tasks/cancel, or every job was removed (in Galaxy's pages too), else
    completed (a cancel that came too late: every job had ended its own way)."""
    finished, total, message = progress_of(job_states, WAIT_ENDS, scheduling=scheduling)
    if finished < total or scheduling:
        if cancel_requested:
            message += "; cancelling"
        return TaskState("working", message, poll_interval_ms(job_states, age_seconds))
    removed = [state for state in job_states if state in REMOVED_JOB_STATES]
    if invocation_cancelled:
        message += "; invocation cancelled"
    if cancel_requested and (removed or invocation_cancelled):
        return TaskState("cancelled", message, None)
    if (job_states and len(removed) == len(job_states)) or (invocation_cancelled and not job_states):
        return TaskState("cancelled", message, None)
    return TaskState("completed", message, None)


def timestamp(seconds: float) -> str:
    """ISO 8601, UTC."""
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat().replace("+00:00", "Z")


@dataclass(frozen=True)
class TaskTimes:
    created_at: float
    updated_at: float
    expires_at: float

    @property
    def ttl_ms(self) -> int:
        """The spec's ``ttlMs``: time to live from creation."""
        return int(round((self.expires_at - self.created_at) * 1000))


def _task_fields(task_id: str, state: TaskState, times: TaskTimes) -> dict[str, Any]:
    fields = {
        "taskId": task_id,
        "status": state.status,
        "statusMessage": state.message,
        "createdAt": timestamp(times.created_at),
        "lastUpdatedAt": timestamp(max(times.updated_at, times.created_at)),
        "ttlMs": times.ttl_ms,
    }
    if state.poll_interval_ms is not None:
        fields["pollIntervalMs"] = state.poll_interval_ms
    return fields


def created_answer(task_id: str, state: TaskState, times: TaskTimes) -> dict[str, Any]:
    """The ``tools/call`` answer that hands the client a task (``CreateTaskResult``)."""
    return {"resultType": "task", **_task_fields(task_id, state, times)}


def detailed_answer(
    task_id: str, state: TaskState, times: TaskTimes, result: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The ``tasks/get`` answer (``GetTaskResult``): the call's own result inlined once completed."""
    answer = {"resultType": "complete", **_task_fields(task_id, state, times)}
    if state.status == "completed":
        answer["result"] = result
    elif state.status == "failed":
        answer["error"] = {"code": INTERNAL_ERROR, "message": state.message}
    return answer


def failed_state(message: str) -> TaskState:
    """A task that can no longer give its result (a job Galaxy no longer has): the spec's failed status."""
    return TaskState("failed", message, None)


def expired(expires_at: float, now: float) -> bool:
    return now >= expires_at
