"""Concurrency: 1, 4, 16 MCP clients at once, each its own MCP session, mixing ranged reads
(peek_dataset_content, 64 KiB at random offsets) with small pastes (create_dataset_from_text,
one call in four). Throughput, p95 latency and errors per level; every paste must also end ``ok``.
"""

import asyncio
import random
import time
from contextlib import AsyncExitStack

from common import (
    percentile,
    upload_by_url,
    write_tabular,
)
from galaxy_mcp_analysis.testing import rest

MIB = 1024 * 1024
READ = 64 * 1024
PASTE = "".join(f"gene{i}\t{i * 7}\n" for i in range(40))  # about 400 bytes
WAIT_SECONDS = 600


async def open_session(stack: AsyncExitStack, url: str):
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    http = await stack.enter_async_context(httpx2.AsyncClient(timeout=300))
    read, write = await stack.enter_async_context(streamable_http_client(url, http_client=http))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return session


def error_text(result) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)[:200]


async def level(url: str, key: str, history_id: str, dataset_id: str, size: int, clients: int, ops: int) -> dict:
    latencies: dict[str, list[float]] = {"peek": [], "paste": []}
    errors: list[str] = []
    pasted: list[str] = []

    async def worker(session, index: int):
        for step in range(ops):
            if (step + index) % 4 == 3:
                kind, arguments = "paste", {"tool": "create_dataset_from_text", "arguments": {
                    "history_id": history_id, "content": PASTE, "name": f"c{clients}-{index}-{step}",
                    "file_type": "tabular", "api_key": key}}
            else:
                kind, arguments = "peek", {"tool": "peek_dataset_content", "arguments": {
                    "dataset_id": dataset_id, "offset": random.randrange(0, size - READ), "max_bytes": READ,
                    "api_key": key}}
            start = time.perf_counter()
            try:
                result = await session.call_tool(arguments["tool"], arguments["arguments"])
            except Exception as e:
                errors.append(f"{kind}: {type(e).__name__}: {e}")
                continue
            latencies[kind].append(time.perf_counter() - start)
            if result.is_error:
                errors.append(f"{kind}: {error_text(result)}")
            elif kind == "paste":
                pasted.append(result.structured_content["dataset_id"])

    async with AsyncExitStack() as stack:
        sessions = [await open_session(stack, url) for _ in range(clients)]
        start = time.perf_counter()
        await asyncio.gather(*(worker(session, index) for index, session in enumerate(sessions)))
        wall = time.perf_counter() - start
    every = latencies["peek"] + latencies["paste"]
    return {
        "clients": clients,
        "calls": clients * ops,
        "wall_s": wall,
        "calls_per_s": len(every) / wall,
        "p50_ms": 1000 * percentile(every, 0.50) if every else None,
        "p95_ms": 1000 * percentile(every, 0.95) if every else None,
        "peek_p95_ms": 1000 * percentile(latencies["peek"], 0.95) if latencies["peek"] else None,
        "paste_p95_ms": 1000 * percentile(latencies["paste"], 0.95) if latencies["paste"] else None,
        "errors": errors,
        "pasted": pasted,
    }


def settle(galaxy, mcp, history_id: str, pasted: list[str]) -> list[str]:
    """Wait (untimed) for the pastes' jobs; returns an error for every paste not ``ok``."""
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        waited = mcp.call_ok("wait_for_jobs", history_id=history_id, timeout_seconds=60, api_key=galaxy.api_key)
        if waited.get("all_terminal"):
            break
    problems = []
    for dataset_id in pasted:
        state = rest(galaxy.galaxy_url, f"/api/datasets/{dataset_id}", galaxy.api_key)["state"]
        if state != "ok":
            problems.append(f"paste {dataset_id} ended {state}")
    return problems


def run(galaxy, mcp, workdir, levels: list[int], ops_total: int) -> dict:
    key = galaxy.api_key
    history_id = mcp.call_ok("create_history", name="bench-concurrency", api_key=key)["id"]
    size = write_tabular(workdir / "concurrency.tabular", 16 * MIB)
    dataset_id = upload_by_url(galaxy, history_id, workdir, "concurrency.tabular")["id"]
    results = {}
    for clients in levels:
        ops = max(1, ops_total // clients)
        figures = asyncio.run(level(galaxy.mcp_url, key, history_id, dataset_id, size, clients, ops))
        figures["errors"] += settle(galaxy, mcp, history_id, figures.pop("pasted"))
        results[clients] = figures
        print(f"  {clients:>2} clients x {ops} calls: {figures['calls_per_s']:.1f} calls/s, "
              f"p50 {figures['p50_ms']:.0f} ms, p95 {figures['p95_ms']:.0f} ms "
              f"(peek p95 {figures['peek_p95_ms']:.0f} ms, paste p95 {figures['paste_p95_ms']:.0f} ms), "
              f"errors: {len(figures['errors'])}")
        for error in figures["errors"][:5]:
            print(f"     error: {error}")
    return results
