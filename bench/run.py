"""``make bench``: the patch set's performance side by side with Galaxy's REST API and the alternatives.

    make bench                                                  # every section, full sizes
    make bench BENCH_ARGS="--size-mib 64 --reps 10 --only reading,overhead"   # a quick look

One Galaxy with the patch set serves every side-by-side measurement (MCP and REST samples
interleaved); afterwards a stock Galaxy 26.1 (the patch set switched off) is started on another
port for its tools/list and its download path, and the standalone galaxy-mcp server (PyPI,
in a virtualenv of its own) runs over stdio against the patched Galaxy. Figures are printed,
ratios last; nothing here is a pass/fail test.
"""

import argparse
import json
import os
import platform
import sys
import tempfile
import time
import traceback
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_audit  # noqa: E402
import bench_bytes  # noqa: E402
import bench_collections  # noqa: E402
import bench_concurrency  # noqa: E402
import bench_context  # noqa: E402
import bench_oauth  # noqa: E402
import bench_overhead  # noqa: E402
import bench_payloads  # noqa: E402
import bench_progress  # noqa: E402
import bench_profile  # noqa: E402
import bench_reading  # noqa: E402
import bench_runners  # noqa: E402
import bench_tool_inputs  # noqa: E402
import bench_local_upload  # noqa: E402
import bench_upload  # noqa: E402
import bench_workflows  # noqa: E402
import standalone_galaxy_mcp  # noqa: E402
from common import (  # noqa: E402
    upload_by_url,
    write_tabular,
)
from conftest import STOCK_TOOLS  # noqa: E402  (bench/common put test/ on the path)
from galaxy_mcp_analysis.testing import (  # noqa: E402
    LaunchedGalaxy,
    McpClient,
)

SECTIONS = ["context", "reading", "bytes", "overhead", "profile", "payloads", "concurrency", "upload", "collections",
            "tool_inputs", "workflows", "progress", "audit", "oauth", "runners"]
#: Sections that start a Galaxy of their own (not the shared patched one).
OWN_GALAXY = {"oauth", "runners"}
REPO = Path(__file__).resolve().parents[1]
#: The bench's Galaxies run make serve's launcher with timers the profile section switches on.
SERVER = [str(Path(__file__).resolve().parent / "profiled_server.py")]


def int_list(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part]


def section_list(text: str) -> list[str]:
    chosen = [part.strip() for part in text.split(",") if part.strip()]
    unknown = sorted(set(chosen) - set(SECTIONS))
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown section(s) {', '.join(unknown)}; choose from {', '.join(SECTIONS)}")
    return chosen


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", type=section_list, default=SECTIONS,
                        help=f"comma-separated sections to run (default all: {','.join(SECTIONS)})")
    parser.add_argument("--size-mib", type=int, default=1024, help="ranged reads: size of the large dataset (1 GiB)")
    parser.add_argument("--reps", type=int, default=50, help="ranged reads: interleaved repetitions (50)")
    parser.add_argument("--bytes-mib", type=int, default=200, help="bytes moved: size of the dataset (200 MiB)")
    parser.add_argument("--calls", type=int, default=200, help="per-call overhead: calls on each side per run (200)")
    parser.add_argument("--runs", type=int, default=3,
                        help="per-call overhead, ranged reads, tool inputs: repeated interleaved runs, for the spread (3)")
    parser.add_argument("--profile-calls", type=int, default=30, help="server-side profile: calls per case (30)")
    parser.add_argument("--clients", type=int_list, default=[1, 4, 16], help="concurrency levels (1,4,16)")
    parser.add_argument("--concurrency-calls", type=int, default=160,
                        help="calls per concurrency level, split among its clients (160)")
    parser.add_argument("--upload-reps", type=int, default=10, help="pasted uploads on each side (10)")
    parser.add_argument("--local-upload-mib", type=int, default=200, help="size of the local file uploaded (200)")
    parser.add_argument("--local-upload-reps", type=int, default=3, help="local-file uploads each way (3)")
    parser.add_argument("--collection-sizes", type=int_list, default=[1000, 10000], help="list sizes (1000,10000)")
    parser.add_argument("--collection-reps", type=int, default=5, help="repetitions per list size (5)")
    parser.add_argument("--tool-inputs-reps", type=int, default=20, help="tool inputs: calls per figure (20)")
    parser.add_argument("--workflow-reps", type=int, default=20, help="workflows: repetitions per figure (20)")
    parser.add_argument("--workflow-jobs", type=int_list, default=[10, 100],
                        help="workflows: jobs in the histories extracted (10,100)")
    parser.add_argument("--progress-reps", type=int, default=20,
                        help="progress: waits per side on finished jobs (20; a quarter of that on a new job)")
    parser.add_argument("--runner-reps", type=int, default=10,
                        help="runners: one-job runs per side and engine (10)")
    parser.add_argument("--runner-sizes", type=int_list, default=[10, 100, 1000],
                        help="runners: map-over sizes on Slurm (10,100,1000)")
    parser.add_argument("--runner-survey-reps", type=int, default=5,
                        help="runners: survey calls per side and size (5)")
    parser.add_argument("--no-stock", action="store_true", help="skip starting a stock Galaxy for comparison")
    parser.add_argument("--no-galaxy-mcp", action="store_true", help="skip the standalone galaxy-mcp server")
    parser.add_argument("--cache-dir", type=Path, default=REPO / ".galaxy-bench",
                        help="where galaxy-mcp's throw-away virtualenv is cached (.galaxy-bench, git-ignored)")
    parser.add_argument("--json", type=Path, help="also write every figure here")
    return parser.parse_args(argv)


def load() -> str:
    return "load average " + " ".join(f"{value:.2f}" for value in os.getloadavg())


def describe_machine() -> dict:
    memory = next((line.split()[1] for line in Path("/proc/meminfo").read_text().splitlines()
                   if line.startswith("MemTotal:")), "0")
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    machine = {
        "cpus": os.cpu_count(),
        "cpu": cpu,
        "memory_gib": round(int(memory) / 1024 / 1024, 1),
        "python": platform.python_version(),
        "kernel": platform.release(),
        "galaxy_app": metadata.version("galaxy-app"),
        "mcp": metadata.version("mcp"),
        "fastmcp": metadata.version("fastmcp"),
    }
    print("machine: " + ", ".join(f"{key} {value}" for key, value in machine.items()) + f"; {load()}")
    return machine


def galaxy_mcp_script(args):
    """The standalone galaxy-mcp console script, or None (said why) when it cannot be had."""
    if args.no_galaxy_mcp:
        print("galaxy-mcp: skipped (--no-galaxy-mcp)")
        return None
    try:
        started = time.monotonic()
        script = standalone_galaxy_mcp.install(args.cache_dir)
        print(f"galaxy-mcp {standalone_galaxy_mcp.VERSION}: ready in {time.monotonic() - started:.0f} s "
              f"({script.parent.parent})")
        return script
    except standalone_galaxy_mcp.Unavailable as e:
        print(f"galaxy-mcp: NOT MEASURED: {e}")
        return None


def section(name: str, title: str, results: dict, function, *args):
    print(f"{title} [{load()}]:", flush=True)
    started = time.monotonic()
    try:
        results[name] = function(*args)
    except standalone_galaxy_mcp.Unavailable as e:
        print(f"  NOT MEASURED: {e}")
        results[name] = {"unavailable": str(e)}
    except Exception as e:  # one broken section must not cost the figures of the others
        traceback.print_exc()
        print(f"  FAILED: {type(e).__name__}: {e}")
        results[name] = {"failed": f"{type(e).__name__}: {e}"}
        results.setdefault("failed_sections", []).append(name)
    print(f"  ({time.monotonic() - started:.0f} s)", flush=True)


def patched_phase(args, workdir: Path, script, results: dict) -> None:
    with LaunchedGalaxy(workdir / "galaxy" / "data", server=SERVER) as galaxy, McpClient(galaxy.mcp_url) as mcp:
        print(f"Galaxy with the patch set: {galaxy.galaxy_url} (one server for every side-by-side measurement)")
        only = args.only
        if "context" in only:
            section("context", "agent context cost (tools/list)", results, bench_context.run, mcp, STOCK_TOOLS)
            if script and "bytes" not in only:
                section("context_galaxy_mcp", "agent context cost, galaxy-mcp", results, galaxy_mcp_context,
                        script, galaxy, workdir)
        if "reading" in only:
            section("reading", "ranged reads", results, bench_reading.run, galaxy, mcp, workdir, args.size_mib,
                    args.reps, args.runs)
        if "bytes" in only:
            section("bytes", f"bytes moved to show the first 64 KiB of a {args.bytes_mib} MiB dataset", results,
                    bytes_on_patched, args, galaxy, mcp, workdir, script)
        if "overhead" in only:
            section("overhead", "per-call overhead", results, bench_overhead.run, galaxy, mcp, args.calls, args.runs)
        if "profile" in only:
            section("profile", "where the time goes, server side", results, profile_on, args, galaxy, mcp, workdir)
        if "payloads" in only:
            section("payloads", "text block vs structured content of large results", results, bench_payloads.run,
                    galaxy, mcp)
        if "concurrency" in only:
            section("concurrency", "concurrent MCP clients", results, bench_concurrency.run, galaxy, mcp, workdir,
                    args.clients, args.concurrency_calls)
        if "upload" in only:
            section("upload", "pasted upload to ok", results, bench_upload.run, galaxy, mcp, args.upload_reps)
            section("local_upload", f"a {args.local_upload_mib} MiB local file: upload URL vs Galaxy's upload APIs",
                    results, bench_local_upload.run, galaxy, mcp, workdir, args.local_upload_mib,
                    args.local_upload_reps)
        if "collections" in only:
            section("collections", "collections", results, bench_collections.run, galaxy, mcp,
                    args.collection_sizes, args.collection_reps)
        if "tool_inputs" in only:
            section("tool_inputs", "tool inputs: schemas and the run_tool preflight", results, bench_tool_inputs.run,
                    galaxy, mcp, args.tool_inputs_reps, args.runs)
        if "workflows" in only:
            section("workflows", "workflows", results, bench_workflows.run, galaxy, mcp, args.workflow_reps,
                    args.workflow_jobs)
        if "progress" in only:
            section("progress", "wait_for_jobs with and without an MCP progress token", results, bench_progress.run,
                    galaxy, mcp, args.progress_reps)
        if "audit" in only:
            section("audit", "the audit trail's cost per call", results, bench_audit.run, galaxy, mcp, workdir,
                    args.calls, args.runs)


def profile_on(args, galaxy, mcp, workdir) -> dict:
    history_id = mcp.call_ok("create_history", name="bench-profile", api_key=galaxy.api_key)["id"]
    size = write_tabular(workdir / "profile.tabular", 16 * 1024 * 1024)
    dataset_id = upload_by_url(galaxy, history_id, workdir, "profile.tabular")["id"]
    return bench_profile.run(galaxy, dataset_id, size, args.profile_calls)


def stock_profile(args, galaxy) -> dict:
    from common import fetch
    from galaxy_mcp_analysis.testing import rest

    history_id = rest(galaxy.galaxy_url, "/api/histories", galaxy.api_key, {"name": "bench-profile"})["id"]
    dataset_id = fetch(galaxy, galaxy.api_key, history_id, {"src": "pasted", "paste_content": "a\t1\n", "ext": "tabular"})["id"]
    return bench_profile.run(galaxy, dataset_id, 0, args.profile_calls, reads=False)


def galaxy_mcp_context(script, galaxy, workdir) -> dict:
    async def actions(client):
        return (await client.list_tools()).tools

    tools = standalone_galaxy_mcp.session(script, galaxy.galaxy_url, galaxy.api_key, workdir / "galaxy-mcp", actions)
    return bench_context.measure(f"galaxy-mcp {standalone_galaxy_mcp.VERSION}", tools)


def bytes_on_patched(args, galaxy, mcp, workdir, script) -> dict:
    history_id = mcp.call_ok("create_history", name="bench-bytes", api_key=galaxy.api_key)["id"]
    dataset_id, size = bench_bytes.prepare(galaxy, history_id, workdir, args.bytes_mib)
    figures = {"size_bytes": size, "patch_set": bench_bytes.patch_set(galaxy, dataset_id)}
    if script:
        try:
            standalone = bench_bytes.standalone(script, galaxy, dataset_id, workdir)
            tools = standalone.pop("tools")
            figures["galaxy_mcp"] = standalone
            if "context" in args.only:
                figures["galaxy_mcp_context"] = bench_context.measure(
                    f"(context) galaxy-mcp {standalone_galaxy_mcp.VERSION} tools/list", tools)
        except standalone_galaxy_mcp.Unavailable as e:
            print(f"  galaxy-mcp: NOT MEASURED: {e}")
            figures["galaxy_mcp"] = {"unavailable": str(e)}
    return figures


def stock_phase(args, workdir: Path, results: dict) -> None:
    """A stock Galaxy (patch set off) after the patched one stopped: its tools/list, its download path
    and, as a control, its own MCP-over-REST overhead for the same call."""
    with LaunchedGalaxy(workdir / "stock" / "data", patches=False, server=SERVER) as galaxy, \
            McpClient(galaxy.mcp_url) as mcp:
        print(f"stock Galaxy 26.1 (patch set off): {galaxy.galaxy_url}, started after the patched one stopped")
        if "context" in args.only:
            section("context_stock", "agent context cost, stock Galaxy", results, bench_context.measure,
                    f"stock Galaxy {metadata.version('galaxy-app')}", mcp.list_tools())
        if "bytes" in args.only:
            section("bytes_stock", "bytes moved, stock Galaxy", results, bench_bytes.stock, galaxy, workdir,
                    args.bytes_mib)
        if "overhead" in args.only:
            section("overhead_stock", "per-call overhead, stock Galaxy (control: what the patch set adds)", results,
                    bench_overhead.run, galaxy, mcp, args.calls, args.runs, "stock Galaxy: ")
        if "profile" in args.only:
            section("profile_stock", "where the time goes, stock Galaxy (its routing unpatched)", results,
                    stock_profile, args, galaxy)


def ratio(numerator, denominator):
    return numerator / denominator if numerator is not None and denominator else None


def summary(results: dict) -> list[tuple[str, float | None, str]]:
    """(what, figure, target) for every ratio measured in this run."""
    results = {name: figures for name, figures in results.items()
               if not (isinstance(figures, dict) and ({"failed", "unavailable"} & set(figures)))}
    rows = []
    reading = results.get("reading") or {}
    for label, size in (("64k", "64 KiB"), ("1m", "1 MiB")):
        figures = reading.get(label) or {}
        if not figures:
            continue
        rows.append((f"{size} read MCP / REST display?offset&ck_size, p50", figures["p50_ratio"], "<= 1.1"))
        rows.append((f"{size} read MCP / REST display?offset&ck_size, p95", figures["p95_ratio"], "<= 1.2"))
        if "end_over_start" in figures:
            rows.append((f"{size} read near the end / at offset 0, p50", figures["end_over_start"], "<= 1.2"))
        wire = figures.get("wire") or {}
        for side, target in (("mcp", "<= 2.3"), ("rest", "(report)")):
            if side in wire:
                rows.append((f"{size} read: bytes on the wire / content, {side.upper()}", wire[side]["per_content_byte"],
                             target))
    if "rss_growth_mib" in reading:
        rows.append(("server peak RSS growth during 1 MiB reads, MiB", reading["rss_growth_mib"], "<= 3"))
    moved = results.get("bytes") or {}
    ours = (moved.get("patch_set") or {}).get("bytes_moved")
    stock = (results.get("bytes_stock") or {}).get("bytes_moved")
    standalone = ((moved.get("galaxy_mcp") or {}).get("file") or {}).get("bytes_moved")
    if ours:
        rows.append(("bytes moved: stock MCP (URL + GET) / this patch set", ratio(stock, ours), "(report)"))
        rows.append(("bytes moved: galaxy-mcp download_dataset / this patch set", ratio(standalone, ours), "(report)"))
    collections = results.get("collections") or {}
    for size, figures in collections.items():
        if isinstance(figures, dict):
            rows.append((f"create_collection {size:,} elements MCP / REST", figures["mcp_over_rest"], "<= 1.2"))
    if "growth" in collections:
        sizes = [size for size in collections if isinstance(size, int)]
        rows.append((f"MCP time growth {sizes[0]:,} -> {sizes[-1]:,} elements (x{sizes[-1] // sizes[0]} elements)",
                     collections["growth"], f"about {sizes[-1] / sizes[0]:.0f} (linear)"))
    workflows = results.get("workflows") or {}
    if "invoke_mcp_over_rest" in workflows:
        rows.append(("invoke_workflow MCP (preflight) / REST invocation, p50", workflows["invoke_mcp_over_rest"],
                     "<= 1.1"))
        rows.append(("  the same series, async clients", workflows["invoke_mcp_over_rest_async_clients"], "(report)"))
        rows.append(("  the same series, async MCP / urllib REST",
                     workflows["invoke_mcp_over_rest_async_mcp_urllib_rest"],
                     "(report)"))
    for case, figures in (results.get("progress") or {}).items():
        if isinstance(figures, dict):
            rows.append((f"wait_for_jobs ({case}) with / without a progress token, p50", figures["sse_over_json_p50"],
                         "(report)"))
    overhead = results.get("overhead") or {}
    if overhead:
        rows.append(("get_dataset_details MCP / REST, p50", overhead["p50_ratio"], "<= 1.05"))
        rows.append(("get_dataset_details MCP / REST, p95", overhead["p95_ratio"], "<= 1.1"))
        rows.append(("round trip alone: MCP ping / REST GET /api/version, p50", overhead["round_trip_p50_ratio"],
                     "(report)"))
    control = results.get("overhead_stock") or {}
    if control:
        rows.append(("stock Galaxy (control): get_dataset_details MCP / REST, p50", control["p50_ratio"], "(report)"))
        rows.append(("stock Galaxy (control): get_dataset_details MCP / REST, p95", control["p95_ratio"], "(report)"))
    profile = results.get("profile") or {}
    if "routing_share_small_mcp" in profile:
        rows.append(("route matching, share of a small MCP call, patch set (mcp-routes-first)",
                     profile["routing_share_small_mcp"], "(report)"))
    stock_profile_figures = results.get("profile_stock") or {}
    if "routing_share_small_mcp" in stock_profile_figures:
        rows.append(("route matching, share of a small MCP call, stock Galaxy",
                     stock_profile_figures["routing_share_small_mcp"], "patch if >= 0.05"))
    for tool, figures in (results.get("payloads") or {}).items():
        rows.append((f"{tool}: wire bytes, shaped / FastMCP's default text block", figures["wire_ratio"], "(report)"))
    for clients, figures in (results.get("concurrency") or {}).items():
        rows.append((f"{clients} concurrent clients: calls/s", figures["calls_per_s"], "(report)"))
        rows.append((f"{clients} concurrent clients: p95 ms", figures["p95_ms"], "(report)"))
        rows.append((f"{clients} concurrent clients: errors", len(figures["errors"]), "0"))
    local = results.get("local_upload") or {}
    if "answer_over_tus" in local:
        rows.append(("local file: upload URL / Galaxy's tus upload, to ok", local["ok_over_tus"], "within 1.1"))
        rows.append(("local file: upload URL / Galaxy's multipart fetch, to ok", local["ok_over_fetch_multipart"],
                     "within 1.1"))
    upload = results.get("upload") or {}
    if upload:
        rows.append(("pasted upload to ok, wait_for_jobs / REST polling", upload["wait_for_jobs_over_rest"], "about 1"))
        rows.append(("pasted upload to ok, MCP polling / REST polling", upload["polling_over_rest"], "about 1"))
    tool_inputs = results.get("tool_inputs") or {}
    if tool_inputs:
        rows.append(("sort1 run_tool (MCP + preflight) / POST /api/tools, p50, minus 1", tool_inputs["preflight_share"],
                     "<= 0.10"))
    context = results.get("context") or {}
    stock_context = results.get("context_stock") or {}
    galaxy_mcp = results.get("context_galaxy_mcp") or moved.get("galaxy_mcp_context") or {}
    if context.get("tools_list_bytes"):
        rows.append(("tools/list bytes: this patch set / stock Galaxy",
                     ratio(context["tools_list_bytes"], stock_context.get("tools_list_bytes")), "(report)"))
        rows.append(("tools/list bytes: galaxy-mcp / this patch set",
                     ratio(galaxy_mcp.get("tools_list_bytes"), context["tools_list_bytes"]), "(report)"))
    runners = results.get("runners") or {}
    for engine, figures in (runners.get("engines") or {}).items():
        rows.append((f"{engine}: a job to ok, MCP / REST for the same job (the engine's latency shared), p50",
                     figures["same_job_mcp_over_rest"], "<= 1.05"))
        rows.append((f"{engine}: the same, side by side on separate jobs (the engine's noise included), p50",
                     figures["mcp_over_rest"], "(report)"))
    curve = runners.get("slurm_map_over") or {}
    for size, point in curve.items():
        if isinstance(size, int):
            for pair in ("submit", "wait_for_jobs", "list_jobs", "get_history_contents"):
                rows.append((f"Slurm map-over {size:,}: {pair} MCP / REST", point[f"{pair}_mcp_over_rest"], "<= 1.1"))
    for pair, growth in (curve.get("growth") or {}).items():
        rows.append((f"Slurm map-over {min(k for k in curve if isinstance(k, int)):,} -> "
                     f"{max(k for k in curve if isinstance(k, int)):,}: {pair} growth MCP / REST's",
                     growth["mcp"] / growth["rest"], "<= 1 (no faster)"))
        added = f"{growth['mcp_per_element'] * 1000:.2f} / {growth['rest_per_element'] * 1000:.2f} ms"
        rows.append((f"  the same: time each added element adds, MCP / REST's ({added})",
                     growth["mcp_per_element"] / growth["rest_per_element"], "(report)"))
    oauth = results.get("oauth") or {}
    if oauth:
        rows.append(("OAuth token / API key, get_dataset_details p50", oauth["p50_ratio"], "<= 1.03"))
    return rows


def main(argv=None) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    results: dict = {"machine": describe_machine(), "args": {k: str(v) for k, v in vars(args).items()}}
    needs_galaxy_mcp = bool({"bytes", "context"} & set(args.only))
    script = galaxy_mcp_script(args) if needs_galaxy_mcp else None
    with tempfile.TemporaryDirectory(prefix="mcp-bench-") as tmp:
        workdir = Path(tmp)
        if set(args.only) - OWN_GALAXY:
            patched_phase(args, workdir, script, results)
        if "oauth" in args.only:
            section("oauth", "the OAuth token check against an API key (a Galaxy of its own, sign-in on)", results,
                    bench_oauth.run, SERVER, workdir, args.calls, args.runs)
        if "runners" in args.only:
            section("runners", "job engines: a job to ok, MCP against REST; a Slurm map-over and its surveys "
                    "(a Galaxy routing to every engine installed)", results, bench_runners.run, SERVER, workdir,
                    args.runner_reps, args.runner_sizes, args.runner_survey_reps)
        if not args.no_stock and {"bytes", "context", "overhead", "profile"} & set(args.only):
            stock_phase(args, workdir, results)
    print(f"ratios ({time.monotonic() - started:.0f} s in all; {load()}; spreads: median [min-max] of the runs):")
    for what, figure, target in summary(results):
        if figure is None:
            shown = "not measured"
        elif isinstance(figure, dict):  # the spread over repeated runs
            shown = f"{figure['median']:.2f} [{figure['min']:.2f}-{figure['max']:.2f}]"
        else:
            shown = f"{figure:,}" if isinstance(figure, int) else f"{figure:.2f}"
        print(f"  {what:<64} {shown:>18}   target {target}")
    results["summary"] = summary(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, default=str))
    if results.get("failed_sections"):
        print(f"failed sections: {', '.join(results['failed_sections'])}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
