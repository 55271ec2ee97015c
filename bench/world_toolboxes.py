"""False refusals on published toolboxes: every ``<tests>`` case of their tools through a live Galaxy's preflight.

    .venv/bin/python bench/world_toolboxes.py /tmp/world/tool_conf.xml [--out result.json] [--every N] [--judge]

check-toolbox judges test cases with Galaxy's typed model alone (no Galaxy running); since issue 41 a value that
model refuses is judged by Galaxy's own request handling, which needs a Galaxy with the toolbox loaded and the
caller's datasets. This starts one (the tests' launcher: ``make serve TOOL_CONF=...``, 127.0.0.1, a temporary
data directory, stopped by its process group at the end), uploads a small synthetic dataset per datatype the tests
name (``test/integration/tool_requests.py``, as the sweep does: the tests' files are not fetched), and sends each
case, nested and flat, to ``check_tool_inputs``. Each refusal is classified:

- ``model``: a problem the preflight found (typed model, datatype rule) that Galaxy's request handling does not
  overrule: counted as a false refusal unless Galaxy itself refuses the same case (see ``galaxy_refuses``);
- ``galaxy``: Galaxy's own population refuses the request (its data-dependent rules on synthetic data, or the
  test names an option or input Galaxy lacks too).

``decided_by_galaxy`` cases are those the typed model alone refused (before issue 41's change) and Galaxy runs as
sent: "before" refusals are the "after" ones plus these. Read the wrappers; never copy them into this repository.
"""

import argparse
import base64
import gzip
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test" / "integration"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import galaxy_judge  # noqa: E402

from tool_requests import (  # noqa: E402  (the sweep's synthetic inputs)
    SYNTHETIC,
    Inputs,
    replace_test_files,
)

from galaxy_mcp_analysis.core import tool_inputs as rules  # noqa: E402
from galaxy_mcp_analysis.testing import (  # noqa: E402
    McpClient,
    rest,
)
from galaxy_mcp_analysis.testing.client import McpToolError  # noqa: E402
from galaxy_mcp_analysis.testing import launcher  # noqa: E402
from galaxy_mcp_analysis.toolbox_check import (  # noqa: E402
    tool_files,
    tool_parameters,
    tool_test_cases,
)

#: The suggestion of a problem Galaxy's population of the request made (core.tool_input_problems).
GALAXY_JUDGED = "Galaxy judged this value"


class WorldInputs(Inputs):
    """The sweep's synthetic datasets; a test file whose suffix names no datatype of this Galaxy becomes text.
    Binary datatypes the sweep's text stand-ins leave unusable (Galaxy's metadata fails on them, and Galaxy then
    refuses every request naming them, so the judge could decide nothing) are made valid (``BINARY``)."""

    def dataset(self, ext: str, copy: int = 1) -> str:
        key = ext if copy == 1 else f"{ext} #{copy}"
        if key not in self.datasets and ext in BINARY:
            try:
                self.datasets[key] = self._fetched(ext, BINARY[ext](), f"synthetic{'' if copy == 1 else copy}.{ext}")
            except (OSError, KeyError, IndexError) as error:  # the text stand-in then, as before
                print(f"synthetic {ext} not fetched: {error}", flush=True)
        try:
            return super().dataset(ext, copy)
        except McpToolError:
            self.datasets[key] = super().dataset("txt", copy)
            return self.datasets[key]

    def _fetched(self, ext: str, content: bytes, name: str) -> str:
        """Galaxy's fetch API with the bytes inline (a ``base64://`` URL)."""
        url = "base64://" + base64.b64encode(content).decode()
        answer = rest(self.galaxy.galaxy_url, "/api/tools/fetch", self.api_key, {
            "history_id": self.history_id,
            "targets": [{"destination": {"type": "hdas"},
                         "elements": [{"src": "url", "url": url, "ext": ext, "name": name}]}]})
        return answer["outputs"][0]["id"]


def synthetic_bam() -> bytes:
    """One read on one 100-base reference, coordinate-sorted, made by pysam (a Galaxy dependency)."""
    import pysam

    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "synthetic.bam"
        header = {"HD": {"VN": "1.6", "SO": "coordinate"}, "SQ": [{"SN": "chr1", "LN": 100}]}
        with pysam.AlignmentFile(str(path), "wb", header=header) as bam:
            read = pysam.AlignedSegment(bam.header)
            read.query_name, read.query_sequence, read.flag = "r1", "ACGT", 0
            read.reference_id, read.reference_start, read.mapping_quality = 0, 10, 60
            read.cigarstring, read.query_qualities = "4M", pysam.qualitystring_to_array("IIII")
            bam.write(read)
        return path.read_bytes()


BINARY = {
    "bam": synthetic_bam,
    "fastqsanger.gz": lambda: gzip.compress(SYNTHETIC["fastqsanger"].encode()),
    "fasta.gz": lambda: gzip.compress(SYNTHETIC["fasta"].encode()),
}


def cases_of(conf: Path, every: int):
    """(repository, tool_id, version, number, nested request with File/Collection placeholders, parameters)
    of each case."""
    from galaxy.tool_util.parser import get_tool_source

    for index, path in enumerate(tool_files([conf])):
        if index % every:
            continue
        repository = repository_of(path, conf)
        try:
            source = get_tool_source(str(path))
            parameters = tool_parameters(source)
        except Exception as error:  # Galaxy cannot parse or model it: run_tool passes such a tool's inputs on
            yield repository, str(path), None, 0, f"unmodelled: {type(error).__name__}", None
            continue
        for number, state in tool_test_cases(source, parameters):
            yield repository, source.parse_id(), source.parse_version(), number, state, parameters


def repository_of(path: Path, conf: Path) -> str:
    try:
        return Path(path).resolve().relative_to(conf.resolve().parent).parts[0]
    except ValueError:
        return "-"


def origin(error: dict) -> str:
    if error["rule"] == "datatype_not_accepted":
        return "datatype"  # the synthetic dataset's type (a test file's suffix that is no datatype became txt)
    return "galaxy" if GALAXY_JUDGED in (error.get("suggestion") or "") or error["path"] == "inputs" else "model"


def check_case(mcp, key, history_id, tool_id, version, request) -> dict:
    try:
        answer = mcp.call_ok("check_tool_inputs", history_id=history_id, tool_id=tool_id, tool_version=version,
                             inputs=request, api_key=key)
    except McpToolError as error:
        return {"outcome": "error", "error": str(error)[:300]}
    errors = [{k: e.get(k) for k in ("path", "rule", "message", "suggestion")} for e in answer["errors"]]
    origins = {origin(e) for e in errors}
    outcome = "accepted" if answer["valid"] else (
        "refused by the preflight" if "model" in origins else
        "refused on datatype" if "datatype" in origins else "refused by galaxy")
    return {"outcome": outcome, "errors": errors, "decided_by_galaxy": answer.get("decided_by_galaxy", []),
            "resolved_inputs": answer.get("resolved_inputs")}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("tool_conf", type=Path)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--every", type=int, default=1, help="every Nth tool file of the tool_conf")
    parser.add_argument("--judge", action="store_true", help="Galaxy's /api/tools judges the preflight")
    parser.add_argument("--compare-every", type=int, default=1,
                        help="the accepted requests of every Nth case judged too")
    arguments = parser.parse_args()
    began = time.monotonic()
    results = []
    with tempfile.TemporaryDirectory(prefix="world-toolbox-") as directory:
        launcher.STARTUP_TIMEOUT_SECONDS = 1800  # hundreds of wrappers load slowly on a shared machine
        galaxy = launcher.LaunchedGalaxy(Path(directory) / "data", tool_confs=[arguments.tool_conf]).start()
        try:
            started = time.monotonic() - began
            with McpClient(galaxy.mcp_url) as mcp:
                key = galaxy.api_key
                history_id = mcp.call_ok("create_history", name="world toolbox", api_key=key)["id"]
                inputs = WorldInputs(galaxy, mcp, key, history_id)
                judged_in = mcp.call_ok("create_history", name="judge's jobs", api_key=key)["id"]
                cases = 0
                for repository, tool_id, version, number, state, parameters in cases_of(
                        arguments.tool_conf, arguments.every):
                    label = f"{tool_id} {version} test {number}"
                    if parameters is None:
                        results.append({"repository": repository, "case": label, "outcome": state})
                        continue
                    try:
                        request = replace_test_files(state, inputs)
                    except McpToolError as error:
                        results.append({"repository": repository, "case": label, "outcome": "not buildable",
                                        "error": str(error)[:200]})
                        continue
                    cases += 1
                    for form, sent in (("nested", request), ("flat", rules.nested_to_flat(request, parameters))):
                        result = check_case(mcp, key, history_id, tool_id, version, sent)
                        sampled = cases % arguments.compare_every == 0
                        if arguments.judge and result["outcome"] != "error" and (
                                result["outcome"] != "accepted" or sampled):
                            result = galaxy_judge.judge(galaxy, key, (history_id, judged_in), tool_id, version,
                                                        sent, form, result, result.pop("resolved_inputs"))
                        result.pop("resolved_inputs", None)
                        results.append({"repository": repository, "case": label, "form": form,
                                        "request": sent, **result})
                        print(label, form, result["outcome"], json.dumps(result.get("errors", []))[:300],
                              json.dumps(result.get("galaxy", ""))[:300], flush=True)
                for history in (history_id, judged_in):
                    rest(galaxy.galaxy_url, f"/api/histories/{history}", key, {"purge": True}, method="DELETE")
        finally:
            galaxy.stop()
    summary = {"all": summarise(results)}
    for repository in sorted({r["repository"] for r in results}):
        summary[repository] = summarise([r for r in results if r["repository"] == repository])
    summary["all"].update(galaxy_start_seconds=round(started, 1), seconds=round(time.monotonic() - began, 1))
    print(json.dumps(summary, indent=1))
    if arguments.out:
        arguments.out.write_text(json.dumps({"summary": summary, "results": results}, indent=1))
    return 0


def summarise(results: list[dict]) -> dict:
    checked = [r for r in results if "form" in r]
    count = lambda outcome: sum(r["outcome"] == outcome for r in checked)  # noqa: E731
    return {
        "tools": len({r["case"].rsplit(" test ", 1)[0] for r in results}),
        "cases": len({r["case"] for r in checked}),
        "requests": len(checked),
        "accepted": count("accepted"),
        "refused_by_galaxy": count("refused by galaxy"),
        "refused_by_the_preflight": count("refused by the preflight"),
        "refused_on_datatype": count("refused on datatype"),
        "errors": count("error"),
        "decided_by_galaxy": sum(bool(r.get("decided_by_galaxy")) for r in checked),
        "refused_before_change": count("refused by the preflight") + count("refused by galaxy")
        + count("refused on datatype")
        + sum(bool(r.get("decided_by_galaxy")) and r["outcome"] == "accepted" for r in checked),
        "not_buildable": sum(r["outcome"] == "not buildable" for r in results),
        "unmodelled": sum(r["outcome"].startswith("unmodelled") for r in results),
        **judged(checked),
    }


def judged(checked: list[dict]) -> dict:
    """Galaxy's verdicts (``--judge``): false refusals per form, acceptances Galaxy refuses, silent mutations."""
    verdicts = [r for r in checked if "galaxy" in r]
    if not verdicts:
        return {}
    refused = [r for r in verdicts if r["outcome"] != "accepted"]
    accepted = [r for r in verdicts if r["outcome"] == "accepted"]
    false = [r for r in refused if r["galaxy"]["created"]]
    return {
        "requests_flat": sum(r["form"] == "flat" for r in checked),
        "requests_nested": sum(r["form"] == "nested" for r in checked),
        "refusals_judged": len(refused),
        "false_refusals": {form: sum(r["form"] == form for r in false) for form in ("flat", "nested")},
        "false_refusals_by_outcome": {o: sum(r["outcome"] == o for r in false) for o in {r["outcome"] for r in false}},
        "true_refusals": sum(r["galaxy"]["created"] is False for r in refused),
        "no_verdict": sum(r["galaxy"]["created"] is None for r in verdicts),
        "acceptances_judged": len(accepted),
        "accepted_galaxy_refuses": sum(r["galaxy"]["created"] is False for r in accepted),
        "silent_mutations": sum(bool(r["galaxy"].get("differences")) for r in accepted),
    }


if __name__ == "__main__":
    sys.exit(main())
