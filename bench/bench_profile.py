"""Where a call's time goes inside the server: routing, authentication, SQL, the tool body or
REST endpoint, serialization, transport (bench/profiled_server.py has the timers).

For a small call (get_dataset_details vs GET /api/datasets/{id}), a 64 KiB and a 1 MiB read
(peek_dataset_content vs GET display?offset&ck_size) and the bare round trips (MCP ping vs GET
/api/version): calls one at a time, the server's record of each fetched after it; medians per part.
The client's view (time from sending to the last byte read) minus the server's total is the
client and the loopback network.
"""

import random
import statistics
import time

import aio
from profiled_server import PARTS

KIB = 1024


def run(galaxy, dataset_id: str, size: int, calls: int, reads: bool = True) -> dict:
    """``reads=False`` for stock Galaxy, which has no ranged read: the small call and round trips only."""
    return aio.run(measure, galaxy, dataset_id, size, calls, reads)


async def measure(galaxy, dataset_id: str, size: int, calls: int, reads: bool) -> dict:
    results: dict = {}
    async with aio.clients(galaxy.galaxy_url, galaxy.mcp_url, galaxy.api_key) as c:
        await c.get("/bench-profile/on")

        def reader(max_bytes: int, via: str):
            async def read():
                offset = random.randrange(0, size - max_bytes)
                if via == "mcp":
                    await c.call_ok("peek_dataset_content", dataset_id=dataset_id, offset=offset, max_bytes=max_bytes)
                else:
                    await c.get(f"/api/datasets/{dataset_id}/display?offset={offset}&ck_size={max_bytes}")
            return read

        async def small_mcp():
            await c.call_ok("get_dataset_details", dataset_id=dataset_id)

        async def small_rest():
            await c.get(f"/api/datasets/{dataset_id}")

        cases = {
            "small MCP get_dataset_details": small_mcp,
            "small REST GET /api/datasets/{id}": small_rest,
            "64 KiB MCP peek_dataset_content": reader(64 * KIB, "mcp"),
            "64 KiB REST display?offset&ck_size": reader(64 * KIB, "rest"),
            "1 MiB MCP peek_dataset_content": reader(1024 * KIB, "mcp"),
            "1 MiB REST display?offset&ck_size": reader(1024 * KIB, "rest"),
            "round trip MCP ping": c.mcp.send_ping,
            "round trip REST GET /api/version": lambda: c.get("/api/version"),
        }
        if not reads:
            cases = {name: call for name, call in cases.items() if "KiB" not in name and "MiB" not in name}
        for _ in range(3):  # warm every path
            for call in cases.values():
                await call()
        records: dict[str, list[dict]] = {name: [] for name in cases}
        for _ in range(calls):  # one at a time, interleaved
            for name, call in cases.items():
                start = time.perf_counter()
                await call()
                client = time.perf_counter() - start
                record = await c.get("/bench-profile/last")
                if record:
                    record["client"] = client
                    records[name].append(record)
        await c.get("/bench-profile/off")
    print(f"  medians over {calls} calls each, ms (% of the server's total); "
          f"client+net = the client's time minus the server's total")
    header = "".join(f"{part:>16}" for part in (*PARTS, "server total", "client+net", "SQL stmts"))
    print(f"  {'':38}{header}")
    for name, rows in records.items():
        if not rows:
            continue
        medians = {part: 1000 * statistics.median(row[part] for row in rows) for part in PARTS}
        total = 1000 * statistics.median(row["total"] for row in rows)
        client_net = 1000 * statistics.median(row["client"] - row["total"] for row in rows)
        statements = statistics.median(row["statements"] for row in rows)
        results[name] = {"ms": medians, "total_ms": total, "client_net_ms": client_net, "statements": statements,
                         "calls": len(rows)}
        cells = "".join(f"{medians[part]:>8.2f} ({100 * medians[part] / total:>3.0f}%)" for part in PARTS)
        print(f"  {name:<38}{cells}{total:>16.2f}{client_net:>16.2f}{statements:>16.0f}")
    for name, rows in records.items():
        walls = [row["auth_wall"] for row in rows if "auth_wall" in row]
        if walls:
            wall = 1000 * statistics.median(walls)
            cpu = 1000 * statistics.median(row["auth_cpu"] for row in rows if "auth_cpu" in row)
            results[name]["auth_wall_ms"], results[name]["auth_cpu_ms"] = wall, cpu
            print(f"  {name:<38}auth (by_api_key, its SQL included): {wall:.2f} ms wall, {cpu:.2f} ms its thread's CPU")
    small = results.get("small MCP get_dataset_details")
    if small:
        share = small["ms"]["routing"] / small["total_ms"]
        results["routing_share_small_mcp"] = share
        print(f"  route matching is {100 * share:.1f}% of a small MCP call on this server "
              f"(a routing patch is worth it at >= 5% on stock Galaxy)")
    return results
