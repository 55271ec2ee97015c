"""What the OAuth token check costs per call, against an API key (issue 40: at most +3%).

A Galaxy of its own with ``GALAXY_MCP_ANALYSIS_OAUTH=true`` (the bench's main Galaxy runs without
it). One user, signed in through Galaxy's login and the consent page (testing.oauth), holds both
an API key and an access token; two warm MCP sessions, one sending ``x-api-key``, one
``Authorization: Bearer <token>``, call ``get_dataset_details`` on the same dataset, interleaved
(aio.repeated). With the token each request is checked by the bearer gate (one lookup of the
token's hash), and Galaxy's ``by_api_key`` then returns the user the gate found.
"""

from contextlib import AsyncExitStack
from pathlib import Path

import aio
from common import fetch

from galaxy_mcp_analysis.testing import (
    LaunchedGalaxy,
    rest,
)
from galaxy_mcp_analysis.testing.oauth import signed_in_tokens


def run(server: list[str], workdir: Path, calls: int, runs: int = 3) -> dict:
    env = {"GALAXY_MCP_ANALYSIS_OAUTH": "true"}
    with LaunchedGalaxy(workdir / "oauth-galaxy" / "data", server=server, env=env) as galaxy:
        person = {"email": "bench-oauth@example.org", "password": "bench-oauth-password"}
        user = rest(galaxy.galaxy_url, "/api/users", galaxy.admin_api_key, {"username": "bench-oauth", **person})
        key = rest(galaxy.galaxy_url, f"/api/users/{user['id']}/api_key", galaxy.admin_api_key, {})
        history = rest(galaxy.galaxy_url, "/api/histories", key, {"name": "bench-oauth"})["id"]
        dataset_id = fetch(galaxy, key, history, {"src": "pasted", "paste_content": "a\t1\n", "ext": "tabular"})["id"]
        _, tokens = signed_in_tokens(galaxy, person)
        return aio.run(measure, galaxy.mcp_url, dataset_id, key, tokens["access_token"], calls, runs)


async def measure(mcp_url: str, dataset_id: str, key: str, token: str, calls: int, runs: int) -> dict:
    async with AsyncExitStack() as stack:
        by_key = await _session(stack, mcp_url, {"x-api-key": key})
        by_token = await _session(stack, mcp_url, {"authorization": f"Bearer {token}"})

        async def call(session):
            result = await session.call_tool("get_dataset_details", {"dataset_id": dataset_id})
            assert not result.is_error, result.content

        figures = await aio.repeated({"api_key": lambda: call(by_key), "oauth": lambda: call(by_token)}, calls, runs)
        sides = {"api_key": lambda: call(by_key), "oauth": lambda: call(by_token)}
        figures["server"] = await server_side(mcp_url, sides, calls)
    for stat in ("p50", "p95"):
        ratio = aio.ratio_spread(figures, "oauth", "api_key", stat)
        figures[f"{stat}_ratio"] = ratio
        print(f"  {stat}, {runs} runs x {calls} calls: get_dataset_details with an API key "
              f"{aio.show(figures[f'api_key_{stat}_ms'])}, with an OAuth token {aio.show(figures[f'oauth_{stat}_ms'])}"
              f" -> ratio {aio.show_ratio(ratio)} (target <= 1.03)")
    return figures


async def server_side(mcp_url: str, sides: dict, calls: int) -> dict:
    """The server's own time per call (bench/profiled_server.py's record of each request, one call at a time,
    interleaved): medians of its total and of its parts, ms; the difference is what the token check costs
    the server, without the client and the loopback."""
    import statistics

    import httpx2

    galaxy_url = mcp_url.rsplit("/api/mcp", 1)[0]
    records: dict[str, list[dict]] = {name: [] for name in sides}
    async with httpx2.AsyncClient(base_url=galaxy_url, timeout=300) as rest:
        await rest.get("/bench-profile/on")
        for _ in range(calls):
            for name, call in sides.items():
                await call()
                record = (await rest.get("/bench-profile/last")).json()
                if record:
                    records[name].append(record)
        await rest.get("/bench-profile/off")
    medians = {name: {part: 1000 * statistics.median(row[part] for row in rows)
                      for part in ("total", "auth", "sql", "transport", "body")}
               | {"statements": statistics.median(row["statements"] for row in rows)}
               for name, rows in records.items() if rows}
    if len(medians) == 2:
        key, token = medians["api_key"], medians["oauth"]
        parts = ", ".join(f"{part} {key[part]:.2f} -> {token[part]:.2f}"
                          for part in ("auth", "sql", "transport", "body"))
        print(f"  server side, {calls} calls a side, medians: API key {key['total']:.2f} ms "
              f"({key['statements']:.0f} SQL), token {token['total']:.2f} ms ({token['statements']:.0f} SQL): "
              f"+{token['total'] - key['total']:.2f} ms; {parts}")
    return medians


async def _session(stack: AsyncExitStack, mcp_url: str, headers: dict):
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    http = await stack.enter_async_context(httpx2.AsyncClient(headers=headers, timeout=300))
    read, write, *_ = await stack.enter_async_context(streamable_http_client(mcp_url, http_client=http))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    await session.list_tools()
    return session
