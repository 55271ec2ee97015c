"""``make bench``: start one Galaxy with the patch set, run the benchmarks against it, print ratios.

    make bench BENCH_ARGS="--size-mib 1024 --reps 50"
"""

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_collections  # noqa: E402
import bench_context  # noqa: E402
import bench_reading  # noqa: E402
from conftest import STOCK_TOOLS  # noqa: E402  (bench/common put test/ on the path)
from galaxy_mcp_analysis.testing import (  # noqa: E402
    LaunchedGalaxy,
    McpClient,
)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mib", type=int, default=1024, help="size of the large dataset (default 1 GiB)")
    parser.add_argument("--reps", type=int, default=50, help="timed repetitions per measurement")
    parser.add_argument("--collection-sizes", default="1000,10000", help="list sizes for create_collection")
    parser.add_argument("--only", choices=["reading", "collections", "context"], help="run one section")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="mcp-bench-") as tmp:
        workdir = Path(tmp)
        with LaunchedGalaxy(workdir / "galaxy" / "data") as galaxy, McpClient(galaxy.mcp_url) as mcp:
            print(f"Galaxy {galaxy.galaxy_url} (one server for every measurement)")
            results = {}
            if args.only in (None, "context"):
                print("agent context cost:")
                results["context"] = bench_context.run(mcp, STOCK_TOOLS)
            if args.only in (None, "reading"):
                print("ranged reads:")
                results["reading"] = bench_reading.run(galaxy, mcp, workdir, args.size_mib, args.reps)
            if args.only in (None, "collections"):
                print("collections:")
                sizes = [int(size) for size in args.collection_sizes.split(",")]
                results["collections"] = bench_collections.run(galaxy, mcp, sizes, max(1, args.reps // 10))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
