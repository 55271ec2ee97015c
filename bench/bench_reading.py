"""Ranged reads: peek_dataset_content at the start vs near the end of a large dataset,
server memory while reading, and MCP vs Galaxy's REST chunked display for the same bytes."""

import random

from common import (
    median_seconds,
    PeakRss,
    timed,
    upload_by_url,
    write_tabular,
)
from galaxy_mcp_analysis.testing import rest

MIB = 1024 * 1024
READ = 64 * 1024


def run(galaxy, mcp, workdir, size_mib: int, reps: int) -> dict:
    key = galaxy.api_key
    history = mcp.call_ok("create_history", name="bench-reading", api_key=key)["id"]
    size = write_tabular(workdir / "big.tabular", size_mib * MIB)
    seconds, dataset = timed(upload_by_url, galaxy, history, workdir, "big.tabular")
    dataset_id = dataset["id"]
    print(f"  dataset: {size / MIB:.0f} MiB tabular, uploaded and metadata set in {seconds:.1f} s")

    def peek(offset, max_bytes=READ):
        return mcp.call_ok("peek_dataset_content", dataset_id=dataset_id, offset=offset, max_bytes=max_bytes,
                           api_key=key)

    def display(offset):
        return rest(galaxy.galaxy_url, f"/api/datasets/{dataset_id}/display?offset={offset}&ck_size={READ}", key)

    near_end = size - 2 * READ
    peek(0), peek(near_end), display(0)  # warm caches and code paths
    start_times, end_times, mcp_times, rest_times = [], [], [], []
    for _ in range(reps):  # interleaved so drift hits both sides alike
        start_times.append(timed(peek, 0)[0])
        end_times.append(timed(peek, near_end)[0])
        offset = random.randrange(0, size - READ)
        mcp_times.append(timed(peek, offset)[0])
        rest_times.append(timed(display, offset)[0])

    offsets = [0, near_end] + [random.randrange(0, size - MIB) for _ in range(20)]
    with PeakRss(galaxy.process.pid) as rss:
        for offset in offsets:
            peek(offset, max_bytes=MIB)

    results = {
        "size_mib": size / MIB,
        "start_ms": 1000 * median_seconds(start_times),
        "end_ms": 1000 * median_seconds(end_times),
        "end_over_start": median_seconds(end_times) / median_seconds(start_times),
        "mcp_ms": 1000 * median_seconds(mcp_times),
        "rest_ms": 1000 * median_seconds(rest_times),
        "mcp_over_rest": median_seconds(mcp_times) / median_seconds(rest_times),
        "rss_growth_mib": rss.growth / MIB,
        "rss_budget_mib": (2 * MIB + 10 * MIB) / MIB,
    }
    print(f"  64 KiB at offset 0: {results['start_ms']:.1f} ms; near the end: {results['end_ms']:.1f} ms "
          f"-> ratio {results['end_over_start']:.2f} (target <= 1.2)")
    print(f"  server RSS growth over {len(offsets)} reads of 1 MiB: {results['rss_growth_mib']:.1f} MiB "
          f"(target <= {results['rss_budget_mib']:.0f} MiB)")
    print(f"  same 64 KiB: MCP {results['mcp_ms']:.1f} ms vs REST display?offset&ck_size {results['rest_ms']:.1f} ms "
          f"-> ratio {results['mcp_over_rest']:.2f} (target <= 1.3)")
    return results
