"""A synchronous facade over the official ``mcp`` SDK client, and the suite's record of error texts."""

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import Any


class McpToolError(AssertionError):
    """A tool call that was expected to succeed returned an MCP tool error."""


class McpClient:
    """Synchronous facade over the official mcp SDK client (streamable HTTP).

    The SDK is async; tests are not. One event loop runs in a daemon thread and
    keeps one initialized session for the client's lifetime.
    """

    def __init__(
        self, url: str, headers: dict[str, str] | None = None, request_log: list | None = None, modern: bool = False,
        answer: Callable[[str, dict], dict | None] | None = None, tasks: bool = False,
    ):
        """``request_log``, when given, receives every HTTP request this client sends, as (method, url).
        ``modern``: open the session with ``server/discover`` (protocol 2026-07-28, a per-request
        envelope, no handshake) instead of the ``initialize`` handshake.
        ``answer``: the client declares elicitation, and this answers each question (message, schema) with
        ``{"action": ..., "content": ...}`` (None: cancel); every question asked is kept in ``questions``.
        ``tasks``: declare the tasks extension (``io.modelcontextprotocol/tasks``) in every request, as a
        client that handles ``resultType: "task"`` does (``call_for_task``, ``get_task``, ``cancel_task``)."""
        self.url = url
        self.answer = answer
        self.questions: list[str] = []
        self.headers = headers
        self.request_log = request_log
        self.modern = modern
        self.tasks = tasks
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="mcp-client", daemon=True)
        self._thread.start()
        self._closing = asyncio.Event()
        opened: concurrent.futures.Future = concurrent.futures.Future()
        # anyio requires the session's contexts to be exited by the task that entered
        # them, so one long-lived task owns the session; calls run as their own tasks.
        self._owner = asyncio.run_coroutine_threadsafe(self._own_session(opened), self._loop)
        self._session = opened.result(120)

    def _run(self, coroutine, timeout: float = 300):
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout)

    async def _own_session(self, opened: concurrent.futures.Future) -> None:
        import httpx2
        from mcp import ClientSession
        from mcp.client.streamable_http import streamable_http_client

        try:
            async with AsyncExitStack() as stack:
                hooks = {"request": [self._log_request]} if self.request_log is not None else None
                http = await stack.enter_async_context(
                    httpx2.AsyncClient(headers=self.headers, timeout=300, event_hooks=hooks)
                )
                streams = await stack.enter_async_context(streamable_http_client(self.url, http_client=http))
                elicit = self._elicit if self.answer is not None else None
                session = await stack.enter_async_context(ClientSession(
                    streams[0], streams[1], elicitation_callback=elicit, **(task_extension() if self.tasks else {})
                ))
                self.opened_with = await (session.discover() if self.modern else session.initialize())
                opened.set_result(session)
                await self._closing.wait()
        except BaseException as e:
            if not opened.done():
                opened.set_exception(e)
            raise

    async def _elicit(self, context, params):
        from mcp_types import ElicitResult

        self.questions.append(params.message)
        given = self.answer(params.message, params.requested_schema) or {"action": "cancel"}
        return ElicitResult(**given)

    def call_answering(self, tool: str, arguments: dict[str, Any] | None = None, timeout: float = 300):
        """One tools/call on 2026-07-28 driven by hand: each ``input_required`` result's questions answered by
        ``answer`` and the call sent again with the answers and the server's ``requestState``, at most 3 rounds.
        Returns the final result and every ``input_required`` result met on the way."""
        from mcp_types import (
            ElicitResult,
            InputRequiredResult,
        )

        async def drive():
            asked = []
            result = await self._session.call_tool(tool, arguments or {}, allow_input_required=True)
            while isinstance(result, InputRequiredResult) and len(asked) < 3:
                asked.append(result)
                responses = {}
                for key, request in (result.input_requests or {}).items():
                    self.questions.append(request.params.message)
                    given = self.answer(request.params.message, request.params.requested_schema)
                    responses[key] = ElicitResult(**(given or {"action": "cancel"}))
                result = await self._session.call_tool(tool, arguments or {}, input_responses=responses,
                                                       request_state=result.request_state, allow_input_required=True)
            return result, asked

        return self._run(drive(), timeout)

    async def _log_request(self, request) -> None:
        self.request_log.append((request.method, str(request.url)))

    @property
    def protocol_version(self) -> str | None:
        return self._session.protocol_version

    def list_tools(self):
        return self._run(self._session.list_tools()).tools

    def list_tools_result(self):
        """The whole tools/list result (on 2026-07-28 with its caching hint, ``ttl_ms`` and ``cache_scope``)."""
        return self._run(self._session.list_tools())

    def call(self, tool: str, arguments: dict[str, Any] | None = None, timeout: float = 300):
        """One tools/call; past ``timeout`` seconds it raises TimeoutError (a hung call fails its test)."""
        result = self._run(self._session.call_tool(tool, arguments or {}), timeout)
        if result.is_error:
            ERROR_TEXTS.append((tool, error_text(result), dict(arguments or {})))
        return result

    def call_with_progress(self, tool: str, arguments: dict[str, Any] | None = None, timeout: float = 300):
        """One tools/call with a progress callback (so the request carries a progressToken);
        returns the result and every (progress, total, message) the server reported, in order."""
        reported: list[tuple[float, float | None, str | None]] = []

        async def on_progress(progress, total, message):
            reported.append((progress, total, message))

        call = self._session.call_tool(tool, arguments or {}, progress_callback=on_progress)
        result = self._run(call, timeout)
        if result.is_error:
            ERROR_TEXTS.append((tool, error_text(result), dict(arguments or {})))
        return result, reported

    def call_ok(self, tool: str, /, **arguments) -> dict[str, Any]:
        result = self.call(tool, arguments)
        if result.is_error:
            raise McpToolError(f"{tool} failed: {error_text(result)}")
        return result.structured_content

    def call_error(self, tool: str, /, **arguments) -> str:
        result = self.call(tool, arguments)
        if not result.is_error:
            raise AssertionError(f"{tool} succeeded but an error was expected: {result.structured_content}")
        return error_text(result)

    def call_for_task(self, tool: str, arguments: dict[str, Any] | None = None, timeout: float = 300):
        """One tools/call that may be answered with a task: a ``tasks.wire.CreatedTask`` or the CallToolResult."""
        return self._run(self._session.call_tool(tool, arguments or {}, allow_claimed=True), timeout)

    def get_task(self, task_id: str):
        """``tasks/get``: a ``tasks.wire.DetailedTask``."""
        from galaxy_mcp_analysis.tasks.wire import DetailedTask, GetTaskRequest, TaskParams

        return self._run(self._session.send_request(GetTaskRequest(params=TaskParams(task_id=task_id)), DetailedTask))

    def cancel_task(self, task_id: str):
        from galaxy_mcp_analysis.tasks.wire import CancelTaskRequest, TaskParams
        from mcp_types import Result

        return self._run(self._session.send_request(CancelTaskRequest(params=TaskParams(task_id=task_id)), Result))

    def update_task(self, task_id: str, input_responses: dict[str, Any] | None = None):
        from galaxy_mcp_analysis.tasks.wire import UpdateTaskParams, UpdateTaskRequest
        from mcp_types import Result

        params = UpdateTaskParams(task_id=task_id, input_responses=input_responses or {})
        return self._run(self._session.send_request(UpdateTaskRequest(params=params), Result))

    def close(self) -> None:
        if not self._owner.done():
            self._loop.call_soon_threadsafe(self._closing.set)
            try:
                self._owner.result(30)
            except Exception:
                pass  # the server may already be gone; the loop still stops below
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def task_extension() -> dict[str, Any]:
    """The official client's arguments declaring the tasks extension and its one claimed result shape."""
    from mcp.client.extension import ResultClaim

    from galaxy_mcp_analysis.core.tasks import TASKS_EXTENSION
    from galaxy_mcp_analysis.tasks.wire import CreatedTask

    claim = ResultClaim(result_type="task", model=CreatedTask, resolve=finished_task_result)
    return {"extensions": {TASKS_EXTENSION: {}}, "result_claims": {TASKS_EXTENSION: [claim]}}


async def finished_task_result(created, context):
    """The claim's resolver (what ``mcp.client.Client`` does with a task): poll ``tasks/get`` at the interval
    the server suggests until the task ends; its result, or its error as a tool error."""
    from mcp_types import CallToolResult, TextContent

    from galaxy_mcp_analysis.tasks.wire import DetailedTask, GetTaskRequest, TaskParams

    interval = (created.poll_interval_ms or 1000) / 1000
    while True:
        await asyncio.sleep(interval)
        task = await context.session.send_request(GetTaskRequest(params=TaskParams(task_id=created.task_id)),
                                                  DetailedTask)
        if task.status == "completed":
            return CallToolResult.model_validate(task.result, by_name=False)
        if task.status in ("failed", "cancelled"):
            text = task.status_message or task.status
            return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
        interval = (task.poll_interval_ms or 1000) / 1000


#: Every tool error text any McpClient of this process received, as (tool, text, arguments): the
#: suite checks that none shows a traceback, a server path or SQL beyond what the call itself
#: sent (a path-like argument echoed back is the caller's own text; test/conftest.py).
ERROR_TEXTS: list[tuple[str, str, dict]] = []


def error_text(result) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)
