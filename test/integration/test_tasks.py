"""Issue 52, item 1: MCP tasks (``io.modelcontextprotocol/tasks``, SEP-2663) with the official SDK client on
2026-07-28. A client that declares the extension gets a long call's answer as a task handle, polls
``tasks/get`` to the call's own result and stops the Galaxy jobs behind it with ``tasks/cancel``; another
user's handle is not found; a client without the extension gets exactly today's answers.
(The handle across a restart of Galaxy: test_restart.py, on that module's own Galaxy.)"""

import json
import time
from typing import Literal

import httpx
import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import (
    CallToolResult,
    Request,
)

from conftest import (
    fetch,
    held_upload,
)
from galaxy_mcp_analysis.core.tasks import TASKS_EXTENSION
from galaxy_mcp_analysis.tasks.wire import (
    CreatedTask,
    DetailedTask,
    TaskParams,
)
from galaxy_mcp_analysis.testing import (
    McpClient,
    rest,
)
from galaxy_mcp_analysis.testing.audit import audit_lines
from test_protocol_versions import raw_tools_list
from test_workflows import (
    ROWS,
    SORT_WORKFLOW,
    upload_workflow,
)

PASTED = [{"name": f"sample{n}", "src": "pasted", "content": f"gene{n}\t{n}\n", "file_type": "tabular"}
          for n in range(4)]
#: Longest a test polls one task (the server's poll interval is honoured, 2 s at first).
TASK_BOUND_SECONDS = 120


@pytest.fixture(scope="module")
def tasks_client(galaxy, api_key):
    with McpClient(galaxy.mcp_url, headers={"x-api-key": api_key}, modern=True, tasks=True) as client:
        yield client


def poll_until_ended(client: McpClient, task_id: str) -> list:
    """Every tasks/get answer until the task ends, at the interval the server suggests."""
    seen = [client.get_task(task_id)]
    deadline = time.monotonic() + TASK_BOUND_SECONDS
    while seen[-1].status in ("working", "input_required"):
        assert time.monotonic() < deadline, seen[-1]
        time.sleep(seen[-1].poll_interval_ms / 1000)
        seen.append(client.get_task(task_id))
    return seen


def pasted_list(mcp, api_key, history_id, count=4) -> str:
    created = mcp.call_ok("create_collection", history_id=history_id, collection_type="list",
                          element_identifiers=PASTED[:count], api_key=api_key)
    return created["collection_id"]


def map_over(history_id, collection_id) -> dict:
    return {"history_id": history_id, "tool_id": "cat1",
            "inputs": {"input1": {"batch": True, "values": [{"src": "hdca", "id": collection_id}]}}}


def test_a_map_over_of_four_jobs_runs_as_a_task_to_completed(galaxy, tasks_client, mcp, api_key, history_id):
    collection_id = pasted_list(mcp, api_key, history_id)
    created = tasks_client.call_for_task("run_tool", map_over(history_id, collection_id))
    assert isinstance(created, CreatedTask), created
    assert created.status == "working" and created.ttl_ms == 7 * 24 * 3600 * 1000, created
    assert created.poll_interval_ms >= 1000 and created.status_message.startswith("0/4 jobs finished"), created
    polled = poll_until_ended(tasks_client, created.task_id)
    ended = polled[-1]
    assert ended.status == "completed" and ended.status_message == "4/4 jobs finished: 4 ok", ended
    assert ended.poll_interval_ms is None and ended.error is None
    result = CallToolResult.model_validate(ended.result, by_name=False)  # the call's own answer, as a tool result
    assert not result.is_error and len(result.structured_content["jobs"]) == 4
    plain = mcp.call_ok("run_tool", api_key=api_key, **map_over(history_id, collection_id))  # today's answer
    assert sorted(result.structured_content) == sorted(plain)
    assert [job["state"] for job in rest(galaxy.galaxy_url, f"/api/jobs?history_id={history_id}&tool_id=cat1"
                                         "&view=collection&limit=8", api_key)].count("ok") >= 4


def test_tasks_cancel_stops_the_jobs_behind_the_task(galaxy, tasks_client, mcp, api_key, history_id, held_files):
    """cat1 on a dataset whose upload is held open: its job waits for the input until the task is cancelled, and
    never runs once the input arrives. (A running job stopped by tasks/cancel: test_restart.py's sleep job.)"""
    _job, dataset_id, released = held_upload(galaxy, mcp, api_key, history_id, held_files, "held-for-a-task.tsv")
    try:
        created = tasks_client.call_for_task("run_tool", {"history_id": history_id, "tool_id": "cat1",
                                                          "inputs": {"input1": {"src": "hda", "id": dataset_id}}})
        assert isinstance(created, CreatedTask) and created.status == "working", created
        assert not tasks_client.cancel_task(created.task_id).model_dump(exclude={"meta"}, exclude_none=True)  # empty
        ended = poll_until_ended(tasks_client, created.task_id)[-1]
    finally:
        released.set()  # the input arrives only now: a job that was not stopped would run on it
    assert ended.status == "cancelled" and ended.result is None and ended.status_message.endswith("1 deleted"), ended
    mcp.call_ok("wait_for_jobs", history_id=history_id, timeout_seconds=60, api_key=api_key)
    [job] = rest(galaxy.galaxy_url, f"/api/jobs?history_id={history_id}&tool_id=cat1", api_key)
    assert job["state"] == "deleted", job
    tasks_client.cancel_task(created.task_id)  # an ended task stays as it ended
    assert tasks_client.get_task(created.task_id).status == "cancelled"
    first, again = [line for line in audit_lines(galaxy.audit_log) if line["tool"] == "tasks/cancel"][-2:]
    user = rest(galaxy.galaxy_url, "/api/users/current", api_key)["id"]
    assert (first["outcome"], first["user_id"], first["arguments"]) == ("ok", user, {"task_of": "run_tool"}), first
    assert first["touched"] == {"changed": {"job": [job["id"]]}} and first["changed"] == [job["id"]], first
    assert again["outcome"] == "ok" and again["touched"] == {} and created.task_id not in json.dumps([first, again])


def test_the_policy_for_cancel_job_holds_for_tasks_cancel(galaxy, tasks_client, mcp, api_key, history_id, held_files,
                                                          policy):
    """tasks/cancel does cancel_job's work: a rule denying cancel_job refuses it, and one asking consent for it
    too (tasks/cancel cannot ask); the job then runs to ok, the task completes."""
    email = rest(galaxy.galaxy_url, "/api/users/current", api_key)["email"]
    _job, dataset_id, released = held_upload(galaxy, mcp, api_key, history_id, held_files, "held-under-a-rule.tsv")
    refusals = {}
    try:
        created = tasks_client.call_for_task("run_tool", {"history_id": history_id, "tool_id": "cat1",
                                                          "inputs": {"input1": {"src": "hda", "id": dataset_id}}})
        assert isinstance(created, CreatedTask) and created.status == "working", created
        for key in ("deny_mcp_tools", "confirm_mcp_tools"):
            policy(f"rules:\n  - name: no-{key}\n    who: {{users: [\"{email}\"]}}\n    {key}: [cancel_job]\n")
            with pytest.raises(Exception) as refused:
                tasks_client.cancel_task(created.task_id)
            refusals[key] = str(refused.value)
            assert tasks_client.get_task(created.task_id).status == "working"
        policy("rules: []\n")
    finally:
        released.set()
    assert refusals["deny_mcp_tools"].startswith("[FORBIDDEN] rule no-deny_mcp_tools: cancel_job is denied"), refusals
    refused_lines = [line for line in audit_lines(galaxy.audit_log) if line["tool"] == "tasks/cancel"][-2:]
    assert [(line["outcome"], line["touched"]) for line in refused_lines] == [("FORBIDDEN", {})] * 2, refused_lines
    assert "tasks/cancel cannot ask the person" in refusals["confirm_mcp_tools"], refusals
    assert "Call cancel_job for each job instead" in refusals["confirm_mcp_tools"], refusals
    ended = poll_until_ended(tasks_client, created.task_id)[-1]
    assert ended.status == "completed" and ended.status_message == "1/1 jobs finished: 1 ok", ended


def test_a_workflow_invocation_runs_as_a_task_and_tasks_cancel_cancels_one(galaxy, tasks_client, mcp, api_key,
                                                                           history_id, held_files):
    workflow_id = upload_workflow(galaxy, api_key, SORT_WORKFLOW)
    table = fetch(galaxy, api_key, history_id, {"src": "pasted", "paste_content": ROWS, "ext": "tabular"})["id"]
    invoke = {"workflow_id": workflow_id, "history_id": history_id}
    created = tasks_client.call_for_task("invoke_workflow", {**invoke, "inputs": {"table": {"src": "hda", "id": table}}})
    assert isinstance(created, CreatedTask), created
    ended = poll_until_ended(tasks_client, created.task_id)[-1]
    assert ended.status == "completed" and ended.status_message == "1/1 jobs finished: 1 ok", ended
    invocation_id = ended.result["structuredContent"]["id"]
    assert rest(galaxy.galaxy_url, f"/api/invocations/{invocation_id}", api_key)["state"] == "scheduled"
    _job, held, released = held_upload(galaxy, mcp, api_key, history_id, held_files, "held-for-a-workflow.tsv")
    try:
        waiting = tasks_client.call_for_task("invoke_workflow", {**invoke, "inputs": {"table": {"src": "hda", "id": held}}})
        assert isinstance(waiting, CreatedTask), waiting
        tasks_client.cancel_task(waiting.task_id)
        cancelled = poll_until_ended(tasks_client, waiting.task_id)[-1]
    finally:
        released.set()
    assert cancelled.status == "cancelled" and "invocation cancelled" in cancelled.status_message, cancelled
    [invocation] = [item for item in rest(galaxy.galaxy_url, f"/api/invocations?history_id={history_id}", api_key)
                    if item["id"] != invocation_id]
    assert invocation["state"] in ("cancelling", "cancelled"), invocation
    mcp.call_ok("wait_for_jobs", history_id=history_id, timeout_seconds=60, api_key=api_key)
    sorts = rest(galaxy.galaxy_url, f"/api/jobs?history_id={history_id}&tool_id=sort1", api_key)
    assert sorted(job["state"] for job in sorts) in (["ok"], ["deleted", "ok"]), sorts  # nothing ran for the cancelled


def test_another_users_handle_is_not_found(galaxy, tasks_client, mcp, api_key, other_user_key, history_id):
    created = tasks_client.call_for_task("run_tool", map_over(history_id, pasted_list(mcp, api_key, history_id, 1)))
    assert isinstance(created, CreatedTask), created
    with McpClient(galaxy.mcp_url, headers={"x-api-key": other_user_key}, modern=True, tasks=True) as other:
        for ask in (other.get_task, other.cancel_task, other.update_task):
            with pytest.raises(MCPError) as refused:
                ask(created.task_id)
            assert refused.value.error.code == -32602 and "Task not found" in refused.value.error.message
        with pytest.raises(MCPError) as unknown:
            other.get_task("x" * 43)
        assert unknown.value.error.message == refused.value.error.message  # no telling whose it is
    [line] = [line for line in audit_lines(galaxy.audit_log) if line["tool"] == "tasks/cancel"][-1:]
    assert (line["outcome"], line["user_id"], line["touched"]) == ("NOT_FOUND", None, {}), line  # nothing stopped
    assert tasks_client.get_task(created.task_id).status in ("working", "completed")  # its owner's still
    # No task of this server asks for input: an answer to a request never made is acknowledged and ignored.
    assert not tasks_client.update_task(created.task_id, {"never-asked": {"action": "accept"}}).model_dump(
        exclude={"meta"}, exclude_none=True)
    poll_until_ended(tasks_client, created.task_id)


def test_a_client_without_the_extension_gets_todays_answer(galaxy, mcp, api_key, history_id):
    collection_id = pasted_list(mcp, api_key, history_id, 1)
    with McpClient(galaxy.mcp_url, headers={"x-api-key": api_key}, modern=True) as modern:
        result = modern.call("run_tool", map_over(history_id, collection_id))  # 2026-07-28, no extension
    assert isinstance(result, CallToolResult) and not result.is_error and len(result.structured_content["jobs"]) == 1
    # A 2025-06-18 client, even one writing the extension into _meta (no handshake-era client can declare it).
    call = {"name": "run_tool", "arguments": map_over(history_id, collection_id),
            "_meta": {"io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS_EXTENSION: {}}}}}
    answer = httpx.post(galaxy.mcp_url, timeout=120, json={"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                                            "params": call},
                        headers={"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18",
                                 "x-api-key": api_key}).json()["result"]
    assert "resultType" not in answer and "taskId" not in answer and len(answer["structuredContent"]["jobs"]) == 1
    mcp.call_ok("wait_for_jobs", history_id=history_id, timeout_seconds=120, api_key=api_key)


def test_tools_list_is_the_same_bytes_with_tasks_on(galaxy, api_key, tasks_client):
    """tools/list carries nothing of tasks (no tool declares FastMCP's task execution): a 2025-06-18 client's
    bytes are stable and hold no task field; a client declaring the extension lists the same tools."""
    legacy = raw_tools_list(galaxy, api_key)
    assert legacy == raw_tools_list(galaxy, api_key)
    tools = json.loads(legacy)["result"]["tools"]
    assert not [tool["name"] for tool in tools if "execution" in tool or "task" in json.dumps(tool.get("_meta", {}))]
    with McpClient(galaxy.mcp_url, headers={"x-api-key": api_key}, modern=True) as modern:
        assert tasks_client.list_tools() == modern.list_tools()


class _MisroutedParams(TaskParams):
    route: str


class _MisroutedGet(Request[_MisroutedParams, Literal["tasks/get"]]):
    """A tasks/get whose Mcp-Name header names another task than its body."""

    method: Literal["tasks/get"] = "tasks/get"
    params: _MisroutedParams
    name_param = "route"


def test_the_task_methods_refuse_what_the_extension_refuses(galaxy, api_key, tasks_client):
    handle = "y" * 43
    with McpClient(galaxy.mcp_url, headers={"x-api-key": api_key}, modern=True) as undeclared:
        with pytest.raises(MCPError) as missing:
            undeclared.get_task(handle)
    assert missing.value.error.code == -32021
    assert missing.value.error.data == {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}}
    misrouted = _MisroutedGet(params=_MisroutedParams(task_id=handle, route="z" * 43))
    with pytest.raises(MCPError) as mismatch:
        tasks_client._run(tasks_client._session.send_request(misrouted, DetailedTask))
    assert mismatch.value.error.code == -32020
    legacy = httpx.post(galaxy.mcp_url, timeout=60, json={"jsonrpc": "2.0", "id": 1, "method": "tasks/get",
                                                          "params": {"taskId": handle}},
                        headers={"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18",
                                 "x-api-key": api_key}).json()
    assert legacy["error"]["code"] == -32601, legacy
