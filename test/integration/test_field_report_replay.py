"""Issue 10: the field report's analysis (seeds/002), replayed end to end through /api/mcp alone.

Four small synthetic S. aureus "assemblies" are pasted, gathered into a list collection and
mapped through Galaxy's bundled tools (Select, Line/Word/Character count, Remove beginning)
the way the report mapped staramr, ISEScan and Bakta; every output is read back in byte
ranges, the one step that ends ok with an empty output is diagnosed, its parameters read and
the job rerun with one change that makes the output non-empty, and a notebook page is
written, refused once for a malformed directive, fixed from the error text alone and read back.

Only the official mcp client talks to Galaxy: every HTTP request it sends is recorded and must
be to /api/mcp, and Galaxy's REST helper is disabled for the test. The calls and trimmed
responses become doc/agent-guide.md's walkthrough; the test fails when the guide no longer
matches what the run produced (regenerate with UPDATE_AGENT_GUIDE=1, see doc/testing.md).
"""

import difflib
import os
import random
import re
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from galaxy_mcp_analysis.testing import McpClient
from replay_transcript import (
    guide_blocks,
    Transcript,
    update_guide,
)

GUIDE = Path(__file__).resolve().parents[2] / "doc" / "agent-guide.md"
WAIT_SECONDS = 110  # below the server's 120 s cap, and below the client's 300 s request timeout

#: isolate -> contigs (description, length); the first contig is the chromosome.
ISOLATES = {
    "SA01": [("chromosome", 150), ("plasmid pSA01a", 48), ("plasmid pSA01b", 30)],
    "SA02": [("chromosome", 132), ("plasmid pSA02a", 40)],
    "SA03": [("chromosome", 144), ("plasmid pSA03a", 36)],
    "SA04": [("chromosome", 126)],  # no plasmid: its "plasmid contigs" output will be empty
}


def assembly(isolate: str, contigs) -> tuple[str, list[str]]:
    """A FASTA text with 60-column sequence lines, and its header lines."""
    rng = random.Random(isolate)
    text, headers = "", []
    for number, (description, length) in enumerate(contigs, start=1):
        header = f">{isolate}_contig{number} {description} length={length}\n"
        sequence = "".join(rng.choice("ACGT") for _ in range(length))
        headers.append(header)
        text += header + "".join(sequence[i:i + 60] + "\n" for i in range(0, length, 60))
    return text, headers


def apply_fix_from_error(document: str, error: str) -> str:
    """Fix a refused page using only the error text: the line it names, and the corrected
    directive it offers (the text of that directive call that differs from the broken one)."""
    line_number = int(re.search(r"\bline (\d+)\b", error)[1])
    lines = document.split("\n")
    broken = lines[line_number - 1].strip()
    directive = re.match(r"\w+", broken)[0]
    offered = [call for call in re.findall(rf"{directive}\([^\n]*\)", error) if call != broken]
    assert offered, f"the error offers no corrected {directive}(...) line:\n{error}"
    lines[line_number - 1] = offered[-1]
    return "\n".join(lines)


@pytest.fixture
def no_rest(monkeypatch):
    """Any urllib request from the test process (testing.rest, conftest helpers) fails the test."""
    attempts = []

    def refuse(request, *args, **kwargs):
        attempts.append(getattr(request, "full_url", request))
        raise AssertionError(f"HTTP outside the MCP client: {attempts[-1]}")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    return attempts


@pytest.mark.parametrize("toolset", [None, "core"])
def test_the_field_report_analysis_through_mcp_alone(galaxy, no_rest, record_testsuite_property, toolset):
    """``toolset=core``: the same analysis through /api/mcp?toolset=core (the server's built-in small set,
    issue 31), without the steps that only cross-check it or go beyond it (see ``replay``)."""
    started = time.monotonic()
    http_requests: list[tuple[str, str]] = []
    client = McpClient(galaxy.mcp_url + (f"?toolset={toolset}" if toolset else ""), request_log=http_requests)
    try:
        t = Transcript(client, galaxy.api_key)
        if toolset:
            listed = {tool.name for tool in client.list_tools()}
            assert len(listed) <= 16
        replay(t, full=toolset is None)
        if toolset:
            assert {call.tool for call in t.calls} <= listed
    finally:
        client.close()  # its DELETE of the MCP session is recorded too
    wall_seconds = time.monotonic() - started

    # Zero HTTP requests outside /api/mcp after the user and key exist.
    # The MCP path is "/api/mcp" ("/api/mcp/" on Galaxy 26.1.0 and 26.1.1, see serve.launcher).
    galaxy_netloc, mcp_path = urlsplit(galaxy.mcp_url).netloc, urlsplit(galaxy.mcp_url).path
    elsewhere = [(method, url) for method, url in http_requests
                 if urlsplit(url).path != mcp_path or urlsplit(url).netloc != galaxy_netloc]
    assert http_requests and not elsewhere, elsewhere
    assert sum(method == "POST" for method, _ in http_requests) > len(t.calls)  # the log saw every call
    assert no_rest == []

    calls = len(t.calls)
    if toolset:
        print(f"\nfield-report replay through ?toolset={toolset}: {calls} MCP calls, wall time "
              f"{time.monotonic() - started:.1f} s")
        return
    # junit testsuite properties (pytest's default xunit2 junit keeps these, not per-test ones).
    record_testsuite_property("field_report_replay_mcp_calls", calls)
    record_testsuite_property("field_report_replay_http_requests", len(http_requests))
    record_testsuite_property("field_report_replay_wall_seconds", round(wall_seconds, 1))
    print(f"\nfield-report replay: {calls} MCP calls, {len(http_requests)} HTTP requests, all to /api/mcp; "
          f"wall time {wall_seconds:.1f} s")

    check_guide(t.render())


def check_guide(blocks: dict[str, str], owned: str | None = None) -> None:
    """The guide's blocks of this replay are ``blocks``: those named ``owned*``, or with ``owned`` None every
    block but another replay's (``broken-*``: test_broken_history_replay.py)."""
    guide = GUIDE.read_text()
    if os.environ.get("UPDATE_AGENT_GUIDE") == "1":
        GUIDE.write_text(update_guide(guide, blocks))
        return
    committed = {name: body for name, body in guide_blocks(guide).items()
                 if (name.startswith(owned) if owned else not name.startswith("broken-"))}
    assert set(committed) == set(blocks), (
        f"guide blocks {sorted(committed)} != replay blocks {sorted(blocks)}; regenerate with UPDATE_AGENT_GUIDE=1"
    )
    for name, body in blocks.items():
        if committed[name] != body:
            diff = "\n".join(difflib.unified_diff(committed[name].splitlines(), body.splitlines(),
                                                  "doc/agent-guide.md", "this run", lineterm=""))
            pytest.fail(f"doc/agent-guide.md block '{name}' differs from this run (regenerate with "
                        f"UPDATE_AGENT_GUIDE=1 if the change is intended):\n{diff}")


def wait(t: Transcript, show=True, **names) -> dict:
    """wait_for_jobs until every named job is finished (one call unless the server is very slow)."""
    deadline = time.monotonic() + 600
    while True:
        waited = t.ok("wait_for_jobs", **names, timeout_seconds=WAIT_SECONDS,
                      show=show and WAIT_SHOWN)
        if waited["all_terminal"]:
            return waited
        assert time.monotonic() < deadline, waited
        show = None


def read_whole(t: Transcript, dataset_id: str, show: bool) -> tuple[bytes, int]:
    """Every byte of a dataset through ranged reads of 64 bytes; returns (bytes, calls made)."""
    shown = ["offset", "length", "next_offset", "eof", "file_size", "content"] if show else None
    data, offset, calls = b"", 0, 0
    while True:
        chunk = t.ok("peek_dataset_content", dataset_id=dataset_id, offset=offset, max_bytes=64, show=shown)
        calls += 1
        assert chunk["offset"] == offset and chunk["encoding"] == "utf-8"
        data += chunk["content"].encode()
        assert len(chunk["content"].encode()) == chunk["length"] <= 64
        if chunk["eof"]:
            assert chunk["next_offset"] is None and len(data) == chunk["file_size"]
            return data, calls
        offset = chunk["next_offset"]


def elements(t: Transcript, collection_id: str, label: str, show: bool = True) -> dict[str, str]:
    """{identifier: dataset id} of a list collection, naming each dataset '<label>/<identifier>'."""
    spec = {"collection": {"id": True, "name": True, "element_count": True, "populated_state": True, "elements": {
        "element_identifier": True, "object": ["id", "state", "file_size"]}}} if show else None
    details = t.ok("get_collection_details", collection_id=collection_id, show=spec)["collection"]
    by_identifier = {e["element_identifier"]: e["object"]["id"] for e in details["elements"]}
    for identifier, dataset_id in by_identifier.items():
        t.names.name("dataset", dataset_id, f"{label}/{identifier}")
    return by_identifier


def name_jobs(t: Transcript, result: dict, tool_label: str) -> list[str]:
    job_ids = [job["id"] for job in result["jobs"]]
    for number, job_id in enumerate(job_ids, start=1):
        t.names.name("job", job_id, f"{tool_label} job {number}")
    return job_ids


WAIT_SHOWN = {"jobs": ["job_id", "state", "exit_code", "suspected_silent_failure", "empty_outputs"], "all_terminal": True,
              "timed_out": True, "state_counts": True}
RUN_SHOWN = {"jobs": ["id", "tool_id"], "mapped_over": True,
             "implicit_collections": ["id", "name", "collection_type", "element_count", "output_name"]}


def replay(t: Transcript, full: bool = True) -> None:
    """``full`` False: only the tools of the built-in ``core`` set (core/policy.py): the calls that only
    cross-check a step (connect, check_tool_inputs, get_job_status, validate_page_content, page revisions)
    and the workflow extraction are left out; the repair reruns with run_tool and the notebook's refused
    write is its create_page."""
    texts = {isolate: assembly(isolate, contigs) for isolate, contigs in ISOLATES.items()}

    # ---- connect and a history ----
    t.block = "connect"
    if full:
        connected = t.ok("connect", show={"connected": True, "server": ["version"], "user": ["username"]})
        assert connected["connected"] is True
    history = t.ok("create_history", name="S. aureus comparison (synthetic replay)", show=["id", "name", "count"])
    history_id = history["id"]
    t.names.name("history", history_id, "history")

    # ---- four pasted assemblies, waited for, gathered into a list ----
    t.block = "inputs"
    pasted = {}
    for number, (isolate, (text, _)) in enumerate(texts.items()):
        created = t.ok("create_dataset_from_text", history_id=history_id, content=text, name=f"{isolate}.fasta",
                       file_type="fasta",
                       show=["dataset_id", "hid", "name", "job_id", "file_type", "bytes"] if number == 0 else None)
        assert created["bytes"] == len(text.encode()) and created["name"] == f"{isolate}.fasta"
        pasted[isolate] = created
        t.names.name("dataset", created["dataset_id"], f"{isolate}.fasta")
        t.names.name("job", created["job_id"], f"upload {isolate}")
    uploads = wait(t, job_ids=[created["job_id"] for created in pasted.values()])
    assert [job["state"] for job in uploads["jobs"]] == ["ok"] * 4

    collection = t.ok(
        "create_collection", history_id=history_id, collection_type="list", name="assemblies",
        element_identifiers=[{"name": isolate, "src": "hda", "id": created["dataset_id"]}
                             for isolate, created in pasted.items()],
        show=["collection_id", "hid", "name", "collection_type", "element_count", "populated_state", "elements"],
    )
    assemblies = collection["collection_id"]
    t.names.name("collection", assemblies, "assemblies")
    assert (collection["element_count"], collection["populated_state"]) == (4, "ok")
    assert [element["identifier"] for element in collection["elements"]] == list(ISOLATES)
    for element in collection["elements"]:
        t.names.name("dataset", element["id"], f"assemblies/{element['identifier']}")

    # ---- map Select over the assemblies: the contig headers of each ----
    t.block = "map"
    details = t.ok("get_tool_details", tool_id="Grep1", io_details=True,
                   show={"id": True, "version": True, "inputs": ["name", "type", "takes_collection", "map_over"]})
    [data_input] = [entry for entry in details["inputs"] if entry["type"] == "data"]
    assert data_input["name"] == "input" and data_input["takes_collection"] is False
    # Exactly the value get_tool_details gives, with the collection's id in it.
    batch = {**data_input["map_over"]["input"], "values": [{"src": "hdca", "id": assemblies}]}
    grep = t.ok("run_tool", history_id=history_id, tool_id="Grep1", show=RUN_SHOWN,
                inputs={"input": batch, "pattern": "^>", "invert": "", "keep_header": False})
    [headers_collection] = grep["implicit_collections"]
    headers = headers_collection["id"]
    t.names.name("collection", headers, "contig headers")
    assert (headers_collection["element_count"], headers_collection["output_name"]) == (4, "out_file1")
    assert grep["mapped_over"] == [{"input": "input", "collection_id": assemblies, "wrapped": False}]  # batch form as given
    grep_jobs = name_jobs(t, grep, "Grep1")
    waited = wait(t, job_ids=grep_jobs)
    assert [(job["state"], job["exit_code"]) for job in waited["jobs"]] == [("ok", 0)] * 4

    # ---- read every element's output in 64-byte ranges ----
    t.block = "read"
    header_ids = elements(t, headers, "contig headers")
    assert list(header_ids) == list(ISOLATES)
    pages = {}
    for number, (isolate, dataset_id) in enumerate(header_ids.items()):
        data, pages[isolate] = read_whole(t, dataset_id, show=number == 0)
        assert data == "".join(texts[isolate][1]).encode()
    assert pages["SA01"] == 3  # 116 bytes of headers in 64-byte ranges, whole lines each

    # ---- two more tools mapped over the previous step's implicit collection ----
    t.block = "check"
    wc_inputs = {"input1": {"src": "hdca", "id": headers}, "options": ["lines"], "include_header": True}
    if full:
        checked = t.ok("check_tool_inputs", history_id=history_id, tool_id="wc_gnu", inputs=wc_inputs,
                       show=["valid", "errors", "jobs_expected", "mapped_over", "resolved_inputs"])
        assert (checked["valid"], checked["errors"], checked["jobs_expected"]) == (True, [], 4)
    t.block = "chain"
    counted = t.ok("run_tool", history_id=history_id, tool_id="wc_gnu", show=RUN_SHOWN,
                   inputs={"input1": {"src": "hdca", "id": headers}, "options": ["lines"], "include_header": True})
    assert counted["mapped_over"] == [{"input": "input1", "collection_id": headers, "wrapped": True}]  # wrapped for us
    plasmids_run = t.ok("run_tool", history_id=history_id, tool_id="Remove beginning1", show=RUN_SHOWN,
                        inputs={"input": {"src": "hdca", "id": headers}, "num_lines": 1})
    [counts_collection] = counted["implicit_collections"]
    [plasmids_collection] = plasmids_run["implicit_collections"]
    t.names.name("collection", counts_collection["id"], "contig counts")
    t.names.name("collection", plasmids_collection["id"], "plasmid headers")
    pipeline_jobs = grep_jobs + name_jobs(t, counted, "wc_gnu") + name_jobs(t, plasmids_run, "Remove beginning1")
    both = wait(t, job_ids=pipeline_jobs[len(grep_jobs):])
    assert [job["state"] for job in both["jobs"]] == ["ok"] * 8
    assert [job["exit_code"] for job in both["jobs"]] == [0] * 8
    # One element came out empty; the run was clean (exit 0, nothing on stderr), so it is no failure by
    # itself: an empty result can be right. Is it right here? The input and the parameters tell.
    flagged = [job["job_id"] for job in both["jobs"] if job.get("empty_outputs")]
    assert len(flagged) == 1 and flagged[0] in [job["id"] for job in plasmids_run["jobs"]]
    assert not any(job["suspected_silent_failure"] for job in both["jobs"]), both

    # ---- the empty element: which one, why, and is it right? ----
    t.block = "debug"
    plasmid_ids = elements(t, plasmids_collection["id"], "plasmid headers")
    report = t.ok("get_job_errors", dataset_id=plasmid_ids["SA04"],
                  show=["job_id", "tool_id", "state", "exit_code", "tool_stderr", "tool_stdout", "empty_outputs",
                        "evidence", "suspected_silent_failure"])
    assert report["job_id"] == flagged[0]
    assert (report["state"], report["exit_code"], report["suspected_silent_failure"]) == ("ok", 0, False)
    [empty] = report["empty_outputs"]
    assert (empty["name"], empty["dataset_id"], empty["size"], empty["may_be_empty"]) == (
        "out_file1", plasmid_ids["SA04"], 0, True)
    assert "get_job_parameters" in empty["why"] and report["evidence"]["tool_stderr_bytes"] == 0
    assert report["tool_stderr"] == ""
    if full:
        status = t.ok("get_job_status", job_id=flagged[0], show=["job_id", "empty_outputs", "suspected_silent_failure"])
        assert (status["suspected_silent_failure"], status["empty_outputs"]) == (False, report["empty_outputs"])
    # Its input: one header line (the chromosome), so removing the first line leaves nothing.
    sa04_input = t.ok("peek_dataset_content", dataset_id=header_ids["SA04"],
                      show=["dataset_id", "file_size", "eof", "content"])
    assert sa04_input["content"] == texts["SA04"][1][0] and sa04_input["eof"] is True
    empty = t.ok("peek_dataset_content", dataset_id=plasmid_ids["SA04"], show=["file_size", "content", "eof"])
    assert (empty["content"], empty["file_size"], empty["eof"]) == ("", 0, True)

    # ---- the repair: what the job ran with, then a rerun with the one parameter changed ----
    t.block = "repair"
    if full:
        recorded = t.ok("get_job_parameters", job_id=flagged[0],
                        show=["job_id", "tool_id", "inputs", "parameters", "rerunnable"])
        assert recorded["inputs"] == {"num_lines": 1, "input": {"src": "hda", "id": header_ids["SA04"]}}
        rerun = t.ok("rerun_job", job_id=flagged[0], changes={"num_lines": 0},
                     show={"jobs": ["id", "tool_id"], "outputs": ["id", "name"], "rerun_of": True})
        assert rerun["rerun_of"] == flagged[0]
    else:  # the same tool on the same input, with the one change
        rerun = t.ok("run_tool", history_id=history_id, tool_id="Remove beginning1",
                     inputs={"input": {"src": "hda", "id": header_ids["SA04"]}, "num_lines": 0})
    [repair_job] = name_jobs(t, rerun, "Remove beginning1 rerun")
    t.names.name("dataset", rerun["outputs"][0]["id"], "repaired SA04")
    repaired_run = wait(t, job_ids=[repair_job])
    assert [(job["state"], job["suspected_silent_failure"]) for job in repaired_run["jobs"]] == [("ok", False)]
    repaired = t.ok("peek_dataset_content", dataset_id=rerun["outputs"][0]["id"], show=["file_size", "content", "eof"])
    assert repaired["content"] == texts["SA04"][1][0] and repaired["file_size"] > 0

    # ---- read the results and paste the summary the notebook shows ----
    t.block = "summary"
    count_ids = elements(t, counts_collection["id"], "contig counts")
    rows = []
    for number, isolate in enumerate(ISOLATES):
        counts, _ = read_whole(t, count_ids[isolate], show=number == 0)
        assert counts == f"#lines\n{len(ISOLATES[isolate])}\n".encode()
        plasmid_headers, _ = read_whole(t, plasmid_ids[isolate], show=False)
        assert plasmid_headers == "".join(texts[isolate][1][1:]).encode()
        contigs = int(counts.decode().splitlines()[1])
        rows.append(f"{isolate}\t{contigs}\t{plasmid_headers.decode().count(chr(10))}\n")
    summary_text = "isolate\tcontigs\tplasmid_contigs\n" + "".join(rows)
    summary = t.ok("create_dataset_from_text", history_id=history_id, content=summary_text,
                   name="contigs per isolate", file_type="tabular", show=["dataset_id", "hid", "name", "bytes"])
    t.names.name("dataset", summary["dataset_id"], "summary")
    t.names.name("job", summary["job_id"], "upload summary")
    wait(t, dataset_ids=[summary["dataset_id"]])
    read = t.ok("peek_dataset_content", dataset_id=summary["dataset_id"], show=["extension", "eof", "content"])
    assert (read["content"], read["eof"], read["extension"]) == (summary_text, True, "tabular")
    assert summary_text.endswith("SA04\t1\t0\n")

    # ---- the notebook: check, create, a refused update fixed from its error, read back ----
    t.block = "notebook"
    first = (
        "# Contigs and plasmids in four S. aureus assemblies\n\n"
        "Synthetic replay of the field report's analysis.\n\n"
        "```galaxy\n"
        f'history_dataset_as_table(history_dataset_id={summary["dataset_id"]}, title="Contigs per isolate")\n'
        "```\n\n"
        "Contig headers of each assembly:\n\n"
        "```galaxy\n"
        f"history_dataset_collection_display(history_dataset_collection_id={headers})\n"
        "```\n"
    )
    malformed = first + (
        "\n## Plasmids\n\n"
        "SA04 has no plasmid contig: Remove beginning left its list empty (exit 0, nothing on stderr).\n\n"
        "```galaxy\n"
        f"history_dataset_as_table(history_dataset_id={plasmid_ids['SA01']}, title=Plasmid contigs of SA01)\n"
        "```\n"
    )
    corrected = f'history_dataset_as_table(history_dataset_id={plasmid_ids["SA01"]}, title="Plasmid contigs of SA01")'
    if not full:  # one write: refused, fixed from its error alone, created
        error = t.error("create_page", history_id=history_id, title="S. aureus contigs and plasmids", content=malformed)
        assert error.startswith("[VALIDATION_ERROR] ")
        fixed = apply_fix_from_error(malformed, error)
        assert fixed == malformed.replace(corrected.replace('"', ""), corrected)
        page = t.ok("create_page", history_id=history_id, title="S. aureus contigs and plasmids", content=fixed)
        assert page["content_editor"] == fixed and page["history_id"] == history_id
        return
    assert t.ok("validate_page_content", content=first) == {"valid": True, "errors": []}
    page = t.ok("create_page", history_id=history_id, title="S. aureus contigs and plasmids", content=first,
                show=["page_id", "history_id", "title", "latest_revision_id"])
    page_id = page["page_id"]
    t.names.name("page", page_id, "notebook")
    t.names.name("revision", page["latest_revision_id"], "revision 1")
    assert page["history_id"] == history_id

    error = t.error("update_page", page_id=page_id, content=malformed)
    assert error.startswith("[VALIDATION_ERROR] ")
    refused = t.ok("list_page_revisions", page_id=page_id, show={"revisions": ["id", "edit_source"], "count": True})
    assert refused["count"] == 1  # nothing was saved

    fixed = apply_fix_from_error(malformed, error)
    assert fixed == malformed.replace(corrected.replace('"', ""), corrected)
    updated = t.ok("update_page", page_id=page_id, content=fixed, show=["page_id", "latest_revision_id", "edit_source"])
    t.names.name("revision", updated["latest_revision_id"], "revision 2")

    read_back = t.ok("get_page", page_id=page_id, show=["page_id", "title", "latest_revision_id", "content_editor"])
    assert read_back["content_editor"] == fixed and corrected in read_back["content_editor"]
    revisions = t.ok("list_page_revisions", page_id=page_id, show={"revisions": ["id", "edit_source"], "count": True})
    assert [r["id"] for r in revisions["revisions"]] == [page["latest_revision_id"], updated["latest_revision_id"]]
    assert revisions["revisions"][-1]["edit_source"] == "agent"
    previous = t.ok("get_page_revision", page_id=page_id, revision_id=page["latest_revision_id"],
                    show=["page_id", "edit_source", "is_latest", "content_editor"])
    assert previous["content_editor"] == first and previous["is_latest"] is False

    # ---- save the analysis as a workflow and re-run it on one new assembly ----
    t.block = "workflow"
    # The analysis's own jobs: the repair's one-off rerun is not a step of the pipeline.
    saved = t.ok("create_workflow_from_history", history_id=history_id, name="contigs and plasmids",
                 job_ids=pipeline_jobs,
                 show={"workflow_id": True, "name": True, "inputs": ["label", "kind", "collection_type"],
                       "steps": ["step_index", "label", "tool_id"]})
    workflow_id = saved["workflow_id"]
    t.names.name("workflow", workflow_id, "workflow")
    assert [(entry["label"], entry["kind"]) for entry in saved["inputs"]] == [("assemblies", "collection")]
    assert [step["tool_id"] for step in saved["steps"][1:]] == ["Grep1", "wc_gnu", "Remove beginning1"]
    new_text, new_headers = assembly("SA05", [("chromosome", 120), ("plasmid pSA05a", 42)])
    pasted_new = t.ok("create_dataset_from_text", history_id=history_id, content=new_text, name="SA05.fasta",
                      file_type="fasta", show=["dataset_id", "name"])
    t.names.name("dataset", pasted_new["dataset_id"], "SA05.fasta")
    wait(t, dataset_ids=[pasted_new["dataset_id"]], show=None)
    new_collection = t.ok("create_collection", history_id=history_id, collection_type="list", name="new assembly",
                          element_identifiers=[{"name": "SA05", "src": "hda", "id": pasted_new["dataset_id"]}],
                          show=["collection_id", "name", "element_count"])["collection_id"]
    t.names.name("collection", new_collection, "new assembly")
    invoked = t.ok("invoke_workflow", workflow_id=workflow_id, history_id=history_id,
                   inputs={"assemblies": {"src": "hdca", "id": new_collection}},
                   show=["state", "inputs_by", "mapped_over"])  # the id's placeholder depends on earlier tests
    t.names.name("invocation", invoked["id"], "invocation")
    assert invoked["inputs_by"] == "label"
    waited = t.ok("wait_for_jobs", invocation_id=invoked["id"], timeout_seconds=WAIT_SECONDS,
                  show=["all_terminal", "invocation_scheduled", "state_counts"])
    assert waited["all_terminal"] and waited["invocation_scheduled"]
    followed = t.ok("get_invocation_details", invocation_id=invoked["id"],
                    show={"progress": ["state", "terminal", "failed_steps"]})
    progress = followed["progress"]
    assert (progress["state"], progress["terminal"], progress["failed_steps"]) == ("ok", True, [])
    counts_step = next(step for step in progress["steps"] if step["tool_id"] == "wc_gnu")
    new_counts = elements(t, counts_step["outputs"]["out_file1"]["id"], "new contig counts", show=False)
    counted_new, _ = read_whole(t, new_counts["SA05"], show=True)
    assert counted_new == f"#lines\n{len(new_headers)}\n".encode()
