"""A small probe of the preflight's own time per call, for a shared machine where `make bench --only tool_inputs`
is too heavy: check_tool_inputs (run_tool's preflight and Galaxy's population, no job) on a running Galaxy.

    .venv/bin/python bench/preflight_probe.py DATA_DIR/server.json [reps]

Three requests to a Galaxy that serves test/corpus (the test session's, or `make serve
TOOL_CONF=test/corpus/tool_conf.xml`): sort1 valid; corpus_groups valid (``strict: true``); corpus_groups with
``strict: "off"``, which Galaxy's typed model refuses and its request handling runs as sent (issue 41: the one
extra step, ``Tool.expand_incoming``). Medians and spread in ms; the calls alternate so load hits each alike.
Figures from a loaded machine compare the requests with each other only; rerun on an idle machine for absolutes.
"""

import json
import statistics
import sys
import time
from pathlib import Path

from galaxy_mcp_analysis.testing import (
    McpClient,
    rest,
)


def main() -> int:
    info = json.loads(Path(sys.argv[1]).read_text())
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    url, key = info["galaxy_url"], info["api_key"]
    history = rest(url, "/api/histories", key, {"name": "preflight probe"})["id"]
    with McpClient(info.get("mcp_url") or f"{url}/api/mcp") as mcp:
        table = mcp.call_ok("create_dataset_from_text", history_id=history, content="b\t2\na\t1\n", file_type="tabular",
                            api_key=key)["dataset_id"]

        def groups(strict):
            return {"queries": [{"term": "t", "how": {"mode": "window", "window": {"size": 4, "strict": strict}}}]}

        requests = {
            "sort1 valid": ("sort1", {"input": {"src": "hda", "id": table}, "column": "2", "order": "ASC"}),
            "corpus_groups valid": ("corpus_groups", groups(True)),
            "corpus_groups decided by Galaxy": ("corpus_groups", groups("off")),
        }
        times: dict[str, list[float]] = {label: [] for label in requests}
        for _ in range(reps):
            for label, (tool_id, inputs) in requests.items():
                began = time.perf_counter()
                answer = mcp.call_ok("check_tool_inputs", history_id=history, tool_id=tool_id, inputs=inputs,
                                     api_key=key)
                times[label].append(1000 * (time.perf_counter() - began))
                assert answer["valid"], answer
        for label, samples in times.items():
            ordered = sorted(samples)
            print(f"{label}: median {statistics.median(samples):.1f} ms, p10 {ordered[len(ordered) // 10]:.1f}, "
                  f"p90 {ordered[(9 * len(ordered)) // 10]:.1f} ({reps} calls)")
    rest(url, f"/api/histories/{history}", key, {"purge": True}, method="DELETE")
    return 0


if __name__ == "__main__":
    sys.exit(main())
