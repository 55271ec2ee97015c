"""MCP progress: which requests get an SSE stream (mcp.progress), and what a wait reports (core.waiting)."""

import asyncio
import json

import pytest

from galaxy_mcp_analysis.core.waiting import progress_of
from galaxy_mcp_analysis.mcp.progress import (
    accepts_event_stream,
    carries_progress_token,
    per_request_session_manager,
)

ENDS = {"ok", "error", "paused"}


def call(meta=None, **extra) -> bytes:
    params = {"name": "wait_for_jobs", "arguments": {}}
    if meta is not None:
        params["_meta"] = meta
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params, **extra}).encode()


@pytest.mark.parametrize("token", ["abc", 7, 0])
def test_a_request_with_a_progress_token_carries_one(token):
    assert carries_progress_token(call({"progressToken": token}))


@pytest.mark.parametrize(
    "body",
    [
        call(),
        call({}),
        call({"progressToken": None}),
        call({"progressToken": {"nested": 1}}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"_meta": {"progressToken": 1}}}).encode(),
        json.dumps([json.loads(call({"progressToken": 1}))]).encode(),  # a batch
        b"not json",
        b"[" * 100000,
        b"",
    ],
)
def test_anything_else_carries_none(body):
    assert not carries_progress_token(body)


@pytest.mark.parametrize(
    "accept, expected",
    [("application/json, text/event-stream", True), ("*/*", True), ("text/*", True), ("application/json", False), ("", False)],
)
def test_the_accept_header_is_read_as_the_sdk_reads_it(accept, expected):
    assert accepts_event_stream([(b"accept", accept.encode())]) is expected


class FakeManager:
    """What the per-request subclass needs of the SDK's manager: json_response, set in __init__,
    read while _handle_request runs."""

    def __init__(self, json_response):
        self.json_response = json_response
        self.seen = []

    async def _handle_request(self, scope, receive, send):
        message = await receive()
        self.seen.append((self.json_response, message["body"]))


def handle(manager, body: bytes, accept="application/json, text/event-stream", method="POST"):
    chunks = [body[:5], body[5:]]

    async def receive():
        chunk = chunks.pop(0)
        return {"type": "http.request", "body": chunk, "more_body": bool(chunks)}

    scope = {"type": "http", "method": method, "headers": [(b"accept", accept.encode())]}
    asyncio.run(manager._handle_request(scope, receive, None))
    return manager.seen[-1]


def test_only_a_request_carrying_a_token_is_answered_in_sse():
    manager = per_request_session_manager(FakeManager)(json_response=True)
    with_token = call({"progressToken": "t"})
    assert handle(manager, with_token) == (False, with_token)  # the body is handed on whole
    assert handle(manager, call()) == (True, call())
    assert handle(manager, with_token, accept="application/json") == (True, with_token)
    assert manager.json_response is True  # outside a request: the manager's own setting


def test_a_manager_set_to_sse_is_left_alone():
    manager = per_request_session_manager(FakeManager)(json_response=False)
    assert handle(manager, call()) == (False, call()[:5])  # not even read ahead


def test_a_wait_reports_finished_jobs_by_state_then_the_others():
    assert progress_of(["ok", "running", "ok", "error", "queued", "running"], ENDS) == (
        3, 6, "3/6 jobs finished: 1 error, 2 ok; 1 queued, 2 running")
    assert progress_of([], ENDS, scheduling=True) == (0, 0, "0/0 jobs finished; invocation still scheduling")
    assert progress_of(["ok", "ok"], ENDS) == (2, 2, "2/2 jobs finished: 2 ok")
