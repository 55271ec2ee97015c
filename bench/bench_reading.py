"""Ranged reads: peek_dataset_content at the start vs near the end of a large dataset, MCP vs
Galaxy's REST chunked display for the same bytes (64 KiB and 1 MiB), bytes on the wire per byte
of content, and server memory while reading 1 MiB chunks.

Both sides as an agent calls them: the official async MCP client on one warm session, REST on
one kept-alive connection (aio.py); repeated interleaved runs give the spread.
"""

import random

import aio
from common import (
    ByteCountingProxy,
    PeakRss,
    timed,
    upload_by_url,
    write_tabular,
)
from galaxy_mcp_analysis.testing import rest

MIB = 1024 * 1024
KIB = 1024
SIZES = {"64k": 64 * KIB, "1m": MIB}


def run(galaxy, mcp, workdir, size_mib: int, reps: int, runs: int = 3) -> dict:
    key = galaxy.api_key
    history = mcp.call_ok("create_history", name="bench-reading", api_key=key)["id"]
    size = write_tabular(workdir / "big.tabular", size_mib * MIB)
    seconds, dataset = timed(upload_by_url, galaxy, history, workdir, "big.tabular")
    print(f"  dataset: {size / MIB:.0f} MiB tabular, uploaded and metadata set in {seconds:.1f} s")
    return aio.run(measure, galaxy, dataset["id"], size, reps, runs)


def reader(c, dataset_id: str, offsets: list[int], max_bytes: int, via: str):
    """A side of the series: each call reads the next offset of the shared sequence."""
    position = iter(range(10**9))

    async def read():
        offset = offsets[next(position) % len(offsets)]
        if via == "mcp":
            await c.call_ok("peek_dataset_content", dataset_id=dataset_id, offset=offset, max_bytes=max_bytes)
        else:
            await c.get(f"/api/datasets/{dataset_id}/display?offset={offset}&ck_size={max_bytes}")

    return read


async def wire_bytes(galaxy, dataset_id: str, max_bytes: int) -> dict:
    """Bytes on the wire (both directions, headers included) for one read each way, per byte of content."""
    figures = {}
    with ByteCountingProxy(galaxy.galaxy_url) as proxy:
        mcp_url = proxy.url + galaxy.mcp_url[len(galaxy.galaxy_url):]
        async with aio.clients(proxy.url, mcp_url, galaxy.api_key) as c:
            proxy.reset()
            result = await c.call_ok("peek_dataset_content", dataset_id=dataset_id, offset=0, max_bytes=max_bytes)
            figures["mcp"] = (sum(proxy.moved()), result["length"])
            proxy.reset()
            response = await c.get(f"/api/datasets/{dataset_id}/display?offset=0&ck_size={max_bytes}")
            figures["rest"] = (sum(proxy.moved()), len(response["ck_data"].encode()))
            figures = {side: {"bytes": moved, "content": content, "per_content_byte": moved / content}
                       for side, (moved, content) in figures.items()}
            figures["gzip"] = await gzip_cost(c, mcp_url, dataset_id, max_bytes, figures["mcp"]["content"])
    return figures


async def gzip_cost(c, mcp_url: str, dataset_id: str, max_bytes: int, content: int) -> dict:
    """What HTTP compression of the MCP response body would save and cost (not done by the server):
    the body of the same read as a plain JSON-RPC POST, gzip level 1, compressed and decompressed here."""
    import gzip
    import statistics
    import time

    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "peek_dataset_content", "arguments": {"dataset_id": dataset_id, "offset": 0, "max_bytes": max_bytes}}}
    response = await c.http.post(mcp_url, json=request, headers={
        "accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18"})
    body = response.content
    packed, compress, decompress = b"", [], []
    for _ in range(5):
        start = time.perf_counter()
        packed = gzip.compress(body, compresslevel=1)
        compress.append(time.perf_counter() - start)
        start = time.perf_counter()
        gzip.decompress(packed)
        decompress.append(time.perf_counter() - start)
    figures = {"body": len(body), "gzip": len(packed), "per_content_byte": len(packed) / content,
               "compress_ms": 1000 * statistics.median(compress), "decompress_ms": 1000 * statistics.median(decompress)}
    print(f"  gzip level 1 of the MCP body (not done; what it would cost): {figures['body']:,} -> {figures['gzip']:,} "
          f"bytes = {figures['per_content_byte']:.2f}x content, compress {figures['compress_ms']:.1f} ms, "
          f"decompress {figures['decompress_ms']:.1f} ms")
    return figures


async def measure(galaxy, dataset_id: str, size: int, reps: int, runs: int) -> dict:
    results: dict = {"size_mib": size / MIB}
    async with aio.clients(galaxy.galaxy_url, galaxy.mcp_url, galaxy.api_key) as c:
        for label, max_bytes in SIZES.items():
            offsets = [random.randrange(0, size - max_bytes) for _ in range(reps)]
            sides = {"mcp": reader(c, dataset_id, offsets, max_bytes, "mcp"),
                     "rest": reader(c, dataset_id, offsets, max_bytes, "rest")}
            if label == "64k":
                sides["start"] = reader(c, dataset_id, [0], max_bytes, "mcp")
                sides["end"] = reader(c, dataset_id, [size - 2 * max_bytes], max_bytes, "mcp")
            series_reps = reps if label == "64k" else max(5, reps // 2)
            figures = await aio.repeated(sides, series_reps, runs)
            for stat in ("p50", "p95"):
                figures[f"{stat}_ratio"] = aio.ratio_spread(figures, "mcp", "rest", stat)
                print(f"  {label} read, {stat}, {runs} runs x {series_reps}: MCP {aio.show(figures[f'mcp_{stat}_ms'])}"
                      f" vs REST display?offset&ck_size {aio.show(figures[f'rest_{stat}_ms'])}"
                      f" -> ratio {aio.show_ratio(figures[f'{stat}_ratio'])}")
            if label == "64k":
                figures["end_over_start"] = aio.ratio_spread(figures, "end", "start", "p50")
                print(f"  64k read near the end / at offset 0, p50: {aio.show_ratio(figures['end_over_start'])}")
            figures["wire"] = await wire_bytes(galaxy, dataset_id, max_bytes)
            for side, wire in figures["wire"].items():
                if side == "gzip":
                    continue
                print(f"  {label} read on the wire, {side}: {wire['bytes']:,} bytes for {wire['content']:,} bytes "
                      f"of content = {wire['per_content_byte']:.2f}x")
            results[label] = figures

        offsets = [0, size - 2 * MIB] + [random.randrange(0, size - MIB) for _ in range(20)]
        with PeakRss(galaxy.process.pid) as rss:
            for offset in offsets:
                await c.call_ok("peek_dataset_content", dataset_id=dataset_id, offset=offset, max_bytes=MIB)
    results["rss_growth_mib"] = rss.growth / MIB
    results["rss_budget_mib"] = 3.0
    print(f"  server peak RSS growth over {len(offsets)} reads of 1 MiB: {results['rss_growth_mib']:.2f} MiB "
          f"(target <= 3 x 1 MiB)")
    return results
