"""The params of ``tasks/get``, ``tasks/update`` and ``tasks/cancel`` (SEP-2663), for the server and the test client.

``taskId`` (and ``inputResponses``) on the wire: the SDK's models turn snake_case names into camelCase.
The requests name ``taskId`` as their ``name_param``: the official client then sends it as the
``Mcp-Name`` header, as the extension requires on Streamable HTTP.
"""

from typing import (
    Any,
    Literal,
)

from mcp_types import (
    Request,
    RequestParams,
    Result,
)
from pydantic import Field


class TaskParams(RequestParams):
    task_id: str


class UpdateTaskParams(TaskParams):
    input_responses: dict[str, Any] = Field(default_factory=dict)


class GetTaskRequest(Request[TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskParams
    name_param = "taskId"


class UpdateTaskRequest(Request[UpdateTaskParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    params: UpdateTaskParams
    name_param = "taskId"


class CancelTaskRequest(Request[TaskParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskParams
    name_param = "taskId"


class TaskFields(Result):
    """A task as the client reads it (the ``tools/call`` answer's and ``tasks/get``'s common fields)."""

    task_id: str
    status: Literal["working", "input_required", "completed", "failed", "cancelled"]
    status_message: str | None = None
    created_at: str
    last_updated_at: str
    ttl_ms: int | None
    poll_interval_ms: int | None = None


class CreatedTask(TaskFields):
    """The claimed ``tools/call`` result (``resultType: "task"``)."""

    result_type: Literal["task"]


class DetailedTask(TaskFields):
    """``tasks/get``'s answer: the call's result once completed, the JSON-RPC error once failed."""

    result_type: Literal["complete"]
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = None
