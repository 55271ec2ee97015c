"""The bench's clients as an agent runs them: the official async MCP client on one warm session,
and an async HTTP client with one kept-alive connection for REST, on the same event loop.

Timing is interleaved: every repetition runs each side once, the order rotated, so drift on a
shared machine hits every side alike. ``repeated`` runs the whole interleaved series several
times and reports, for each side, p50 and p95 per run and the min/median/max of those over the
runs, so a reader can tell a difference from noise.
"""

import asyncio
import statistics
import time
from collections.abc import (
    Awaitable,
    Callable,
)
from contextlib import asynccontextmanager

from common import percentile


class Clients:
    """One MCP session and one REST connection to a Galaxy, both warm."""

    def __init__(self, mcp, http, galaxy_url: str, api_key: str):
        self.mcp = mcp
        self.http = http
        self.galaxy_url = galaxy_url
        self.api_key = api_key

    async def call_ok(self, tool: str, **arguments) -> dict:
        """A tools/call; the key is also passed as the argument, as stock Galaxy (no header keys) needs it."""
        result = await self.mcp.call_tool(tool, {**arguments, "api_key": self.api_key})
        if result.is_error:
            raise RuntimeError(f"{tool} failed: {' '.join(getattr(b, 'text', '') for b in result.content)[:300]}")
        return result.structured_content

    async def get(self, path: str):
        """A REST GET, its JSON body decoded (the MCP client decodes its result too)."""
        response = await self.http.get(self.galaxy_url + path)
        response.raise_for_status()
        return response.json()


@asynccontextmanager
async def clients(galaxy_url: str, mcp_url: str, api_key: str):
    """The API key goes in the x-api-key header for both, as a configured agent sends it."""
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    headers = {"x-api-key": api_key}
    async with httpx2.AsyncClient(headers=headers, timeout=300) as mcp_http, \
            httpx2.AsyncClient(headers=headers, timeout=300) as rest_http:
        async with streamable_http_client(mcp_url, http_client=mcp_http) as (read, write, *_):
            async with ClientSession(read, write) as session:
                await session.initialize()
                await session.list_tools()  # the SDK caches output schemas from it before the first call
                yield Clients(session, rest_http, galaxy_url, api_key)


def run(coroutine_function, *args):
    """Run one async bench body to completion on a fresh event loop."""
    return asyncio.run(coroutine_function(*args))


async def interleaved(sides: dict[str, Callable[[], Awaitable]], reps: int, warm: int = 5) -> dict[str, list[float]]:
    """``reps`` timed calls of each side, interleaved with the order rotated; seconds per call."""
    names = list(sides)
    for _ in range(warm):
        for name in names:
            await sides[name]()
    times: dict[str, list[float]] = {name: [] for name in names}
    for i in range(reps):
        shift = i % len(names)
        for name in names[shift:] + names[:shift]:
            start = time.perf_counter()
            await sides[name]()
            times[name].append(time.perf_counter() - start)
    return times


def spread(values: list[float]) -> dict[str, float]:
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


async def repeated(sides: dict[str, Callable[[], Awaitable]], reps: int, runs: int) -> dict:
    """``runs`` interleaved series of ``reps`` calls: per side p50/p95 in ms per run, and their spread."""
    per_run = []
    for run_index in range(runs):
        times = await interleaved(sides, reps, warm=5 if run_index == 0 else 1)
        per_run.append({name: {"p50": 1000 * percentile(t, 0.50), "p95": 1000 * percentile(t, 0.95)}
                        for name, t in times.items()})
    figures: dict = {"runs": runs, "reps": reps, "per_run": per_run}
    for name in sides:
        for stat in ("p50", "p95"):
            figures[f"{name}_{stat}_ms"] = spread([run[name][stat] for run in per_run])
    return figures


def ratio_spread(figures: dict, numerator: str, denominator: str, stat: str) -> dict[str, float]:
    """The per-run ratio ``numerator/denominator`` of one statistic, as min/median/max over the runs."""
    return spread([run[numerator][stat] / run[denominator][stat] for run in figures["per_run"]])


def show(spread_ms: dict[str, float], unit: str = "ms") -> str:
    return f"{spread_ms['median']:.1f} {unit} [{spread_ms['min']:.1f}-{spread_ms['max']:.1f}]"


def show_ratio(spread_ratio: dict[str, float]) -> str:
    return f"{spread_ratio['median']:.2f} [{spread_ratio['min']:.2f}-{spread_ratio['max']:.2f}]"
