"""The self-test's runner: one MCP session, the steps in order, then the clean-up."""

import asyncio
import json
import time
import urllib.error
import urllib.request
from contextlib import AsyncExitStack

from galaxy_mcp_analysis.core import selftest_plan as plan
from galaxy_mcp_analysis.selftest import steps as selftest_steps

#: Longest one MCP call may take before its step fails (wait_for_jobs blocks up to 120 s by default).
CALL_TIMEOUT_SECONDS = 180
CONNECT_TIMEOUT_SECONDS = 60


def mcp_url(url: str) -> str:
    """The MCP endpoint of a Galaxy base URL (a URL already naming /api/mcp is kept)."""
    url = url.rstrip("/")
    return url if url.endswith("/api/mcp") else f"{url}/api/mcp"


def run(url: str, api_key: str, out=print) -> int:
    """Run every step, print one line per step and a summary line; 0 unless a step failed."""
    began = time.monotonic()
    results: list[plan.Result] = []

    def report(result: plan.Result) -> None:
        results.append(result)
        out(result.line())

    try:
        asyncio.run(_run(url, api_key, report))
    except Exception as error:  # no MCP session (wrong URL, Galaxy down, MCP off) or it broke
        label = "mcp session" if results else "connect"
        report(plan.Result(label, plan.FAIL, f"MCP session at {mcp_url(url)}: {_cause(error)}"))
    out(plan.summary_line(results, time.monotonic() - began))
    return plan.exit_status(results)


async def _run(url: str, api_key: str, report) -> None:
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    made: dict = {}
    try:
        async with AsyncExitStack() as stack:
            http = await stack.enter_async_context(
                httpx2.AsyncClient(headers={"x-api-key": api_key}, timeout=CALL_TIMEOUT_SECONDS))
            streams = await stack.enter_async_context(streamable_http_client(mcp_url(url), http_client=http))
            session = await stack.enter_async_context(ClientSession(streams[0], streams[1]))
            await asyncio.wait_for(session.initialize(), CONNECT_TIMEOUT_SECONDS)
            listed = await _listed_tools(session)
            for step in plan.PLAN:
                report(plan.blocked(step, made, listed) or await _perform(session, step, made))
    finally:
        if {"history", "page", "workflow"} & set(made):
            report(_clean_up(url, api_key, made))


async def _listed_tools(session) -> set[str]:
    from mcp.types import PaginatedRequestParams

    names, cursor = set(), None
    while True:
        params = PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await asyncio.wait_for(session.list_tools(params=params), CALL_TIMEOUT_SECONDS)
        names |= {tool.name for tool in page.tools}
        cursor = page.next_cursor
        if not cursor:
            return names


async def _perform(session, step: plan.Step, made: dict) -> plan.Result:
    async def call(tool: str, **arguments) -> dict:
        result = await asyncio.wait_for(session.call_tool(tool, arguments), CALL_TIMEOUT_SECONDS)
        text = "\n".join(getattr(block, "text", "") for block in result.content)
        if result.is_error:
            raise selftest_steps.ToolError(text)
        return result.structured_content if result.structured_content is not None else json.loads(text)

    try:
        detail = await selftest_steps.STEPS[step.label](call, made) or ""
    except selftest_steps.ToolError as error:
        return plan.error_result(step, str(error))
    except selftest_steps.CheckFailed as error:
        return plan.Result(step.label, plan.FAIL, str(error))
    except asyncio.TimeoutError:
        return plan.Result(step.label, plan.FAIL, f"no answer within {CALL_TIMEOUT_SECONDS} s")
    except Exception as error:  # the session broke (server gone, worker killed): this step fails
        return plan.Result(step.label, plan.FAIL, _cause(error))
    if missing := [name for name in step.makes if name not in made]:
        return plan.Result(step.label, plan.FAIL, f"made no {missing[0]}")
    return plan.Result(step.label, plan.PASS, detail)


def _clean_up(url: str, api_key: str, made: dict) -> plan.Result:
    """Purge the history, delete the workflow and the page (REST, same key); one result for all."""
    base = mcp_url(url)[: -len("/api/mcp")]
    done, failed = [], []
    invocation = made.get("invocation")
    actions = [
        ("invocation cancelled", f"/api/invocations/{invocation}" if invocation and "invoked" not in made else None),
        ("page deleted", f"/api/pages/{made['page']}" if "page" in made else None),
        ("workflow deleted", f"/api/workflows/{made['workflow']}" if "workflow" in made else None),
        ("history purged", f"/api/histories/{made['history']}?purge=true" if "history" in made else None),
    ]
    for what, path in actions:
        if path is None:
            continue
        try:
            request = urllib.request.Request(base + path, method="DELETE", headers={"x-api-key": api_key})
            with urllib.request.urlopen(request, timeout=60):
                done.append(what)
        except (urllib.error.URLError, OSError) as error:
            failed.append(f"{what.split()[0]} not removed ({_cause(error)})")
    if failed:
        return plan.Result("cleanup", plan.FAIL, "; ".join(failed + done))
    return plan.Result("cleanup", plan.PASS, ", ".join(done))


def _cause(error: BaseException) -> str:
    """The first line of the innermost error (anyio wraps a task's error in exception groups)."""
    while getattr(error, "exceptions", None):
        error = error.exceptions[0]
    return f"{type(error).__name__}: {plan.first_line(str(error))}".rstrip(": ")
