"""Every signal an agent acts on is true (issue 43), on a history broken on purpose, through /api/mcp.

The history holds what a colleague's history holds: a failed upload (text declared as BAM), an
upload from a URL nobody serves, a tool job that failed and a job paused behind it, a job that
warned and left its output empty, a filter that rightly kept no rows with the steps after it
(cut, sort: empty in, empty out), and an ok job with a wrong result. The tests read every flag,
then make every call a `repair`, `resume_with` or error suggestion names and check none is refused.
"""

import pytest

from conftest import fetch
from galaxy_mcp_analysis.testing import rest
from suggested_calls import calls_in

TABLE = "chr1\t30\tgeneA\nchr2\t4\tgeneB\nchr3\t200\tgeneC\n"
#: Tools a hint may name (the test makes each call it finds).
HINTED_TOOLS = {
    "rerun_job", "create_dataset_from_text", "upload_file_from_url", "get_job_errors", "get_job_parameters",
    "peek_dataset_content", "wait_for_jobs", "search_tools", "delete_history_items",
}


def hda(dataset_id: str) -> dict:
    return {"src": "hda", "id": dataset_id}


def start(mcp, api_key, history, tool_id, inputs) -> tuple[str, str]:
    result = mcp.call_ok("run_tool", history_id=history, tool_id=tool_id, inputs=inputs, api_key=api_key)
    return result["jobs"][0]["id"], result["outputs"][0]["id"]


def wait(mcp, api_key, job_ids) -> dict[str, dict]:
    waited = mcp.call_ok("wait_for_jobs", job_ids=job_ids, timeout_seconds=120, api_key=api_key)
    assert waited["all_terminal"], waited
    return {entry["job_id"]: entry for entry in waited["jobs"]}


@pytest.fixture(scope="module")
def broken(galaxy, mcp, api_key, file_server):
    """The broken history: {what: (job id, output dataset id)} once every job has ended."""
    history = mcp.call_ok("create_history", name="broken on purpose", api_key=api_key)["id"]
    table = fetch(galaxy, api_key, history, {"src": "pasted", "paste_content": TABLE, "ext": "tabular"})["id"]
    made = {"table": (None, table)}
    bam = mcp.call_ok("create_dataset_from_text", history_id=history, content="not a bam file\n", file_type="bam",
                      api_key=api_key)
    made["bam upload"] = (bam["job_id"], bam["dataset_id"])
    url = file_server("served-once.tsv", b"a\t1\n").replace("served-once.tsv", "nobody-serves-this.tsv")
    fetched = mcp.call_ok("upload_file_from_url", history_id=history, url=url, file_type="tabular", api_key=api_key)
    made["url upload"] = (fetched["jobs"][0]["id"], fetched["outputs"][0]["id"])
    made["failed cut"] = start(mcp, api_key, history, "Cut1",
                               {"input": hda(table), "columnList": "not-a-column", "delimiter": "T"})
    made["paused sort"] = start(mcp, api_key, history, "sort1",
                                {"input": hda(made["failed cut"][1]), "column": 1, "style": "alpha", "order": "ASC"})
    made["warned grep"] = start(mcp, api_key, history, "Grep1",
                                {"input": hda(table), "pattern": "(unclosed", "invert": "", "keep_header": False})
    made["empty filter"] = start(mcp, api_key, history, "Filter1",
                                 {"input": hda(table), "cond": "c2>1000", "header_lines": 0})
    wait(mcp, api_key, [made["empty filter"][0]])
    made["cut of empty"] = start(mcp, api_key, history, "Cut1",
                                 {"input": hda(made["empty filter"][1]), "columnList": "c1", "delimiter": "T"})
    wait(mcp, api_key, [made["cut of empty"][0]])
    made["sort of empty"] = start(mcp, api_key, history, "sort1", {
        "input": hda(made["cut of empty"][1]), "column": 1, "style": "alpha", "order": "ASC"})
    made["wrong cut"] = start(mcp, api_key, history, "Cut1",
                              {"input": hda(table), "columnList": "c3", "delimiter": "T"})
    wait(mcp, api_key, [job for job, _ in made.values() if job])
    return history, made


# ---- 1. a correct empty result is no failure, and the same evidence gives the same verdict ----


def test_an_empty_chain_is_judged_alike_at_every_step_and_offers_no_repair(mcp, api_key, broken):
    _, made = broken
    chain = ["empty filter", "cut of empty", "sort of empty"]
    waited = wait(mcp, api_key, [made[step][0] for step in chain])
    for step in chain:
        job = made[step][0]
        entry = waited[job]
        report = mcp.call_ok("get_job_errors", job_id=job, api_key=api_key)
        status = mcp.call_ok("get_job_status", job_id=job, api_key=api_key)
        for seen in (entry, report, status):
            assert seen["suspected_silent_failure"] is False and "repair" not in seen, (step, seen)
            [empty] = seen["empty_outputs"]
            assert (empty["dataset_id"], empty["size"], empty["may_be_empty"]) == (made[step][1], 0, True), step
            assert "discovered" not in empty["why"], (step, empty)  # Cut1 and sort1 declare ordinary outputs
            assert seen["evidence"]["exit_code"] == 0 and seen["evidence"]["tool_stderr_bytes"] == 0, seen
        assert entry["empty_outputs"] == report["empty_outputs"] == status["empty_outputs"], step
    filtered, cut, sort = ([waited[made[step][0]]["empty_outputs"][0]["why"] for step in chain])
    assert cut == sort and cut.startswith("every data input of the job is empty"), (cut, sort)
    assert "a filter that kept no rows" in filtered and waited[made["empty filter"][0]]["evidence"]["input_sizes"] == [
        len(TABLE)]
    assert waited[made["cut of empty"][0]]["evidence"]["input_sizes"] == [0]


def test_a_job_that_warned_and_left_its_output_empty_is_flagged_on_that_evidence(mcp, api_key, broken):
    _, made = broken
    job, output = made["warned grep"]
    report = mcp.call_ok("get_job_errors", job_id=job, api_key=api_key)
    assert (report["state"], report["suspected_silent_failure"]) == ("ok", True), report
    assert report["evidence"]["tool_stderr_bytes"] == len(report["tool_stderr"].encode()) > 0, report
    assert report["evidence"]["job_messages"] == ["Warning: Exit code 2 (Select failed)"], report
    [empty] = report["empty_outputs"]
    assert empty["may_be_empty"] is False and "stderr" in empty["why"], empty
    assert report["repair"].startswith(f"rerun_job(job_id={job!r}, changes=..., replace_outputs=true)"), report


# ---- 2. every repair names a call that can succeed for that object ----


def test_a_failed_upload_gets_the_upload_again_or_says_why_none_can(mcp, api_key, broken):
    history, made = broken
    job, dataset = made["bam upload"]
    report = mcp.call_ok("get_job_errors", job_id=job, api_key=api_key)
    assert report["failed_outputs"][0]["dataset_id"] == dataset, report
    # Text declared as BAM: no call can make it a BAM, so none is offered; what was recorded is quoted.
    assert "repair" not in report and "'not a bam file\\n'" in report["no_repair"], report
    assert not calls_in(report["no_repair"], {"create_dataset_from_text", "rerun_job"}), report["no_repair"]
    assert mcp.call_ok("get_job_parameters", job_id=job, api_key=api_key)["rerunnable"] is False
    # The job list says it too: the upload job ended ok, its output did not.
    [row] = [row for row in mcp.call_ok("list_jobs", history_id=history, limit=500, api_key=api_key)["jobs"]
             if row["job_id"] == job]
    assert (row["state"], row["failed_outputs"]) == ("ok", [dataset]), row
    refused = mcp.call_error("rerun_job", job_id=job, replace_outputs=True, api_key=api_key)
    assert refused.startswith("[VALIDATION_ERROR]") and report["no_repair"] in refused, refused
    conflict = mcp.call_error("update_dataset", dataset_id=dataset, file_type="txt", api_key=api_key)
    assert conflict.startswith("[CONFLICT]") and report["no_repair"] in conflict and "rerun_job" not in conflict
    # A url upload can be fetched again: that is its repair.
    [url_repair] = calls_in(mcp.call_ok("get_job_errors", job_id=made["url upload"][0], api_key=api_key)["repair"],
                            HINTED_TOOLS)[:1]
    assert url_repair.tool == "upload_file_from_url" and url_repair.arguments["url"].endswith("nobody-serves-this.tsv")


def test_one_listing_shows_what_every_job_of_the_history_ran_with(mcp, api_key, broken):
    history, made = broken
    rows = {row["job_id"]: row for row in mcp.call_ok("list_jobs", history_id=history, limit=500,
                                                         include_parameters=True, api_key=api_key)["jobs"]}
    assert rows[made["failed cut"][0]]["parameters"]["columnList"] == "not-a-column", rows[made["failed cut"][0]]
    assert rows[made["warned grep"][0]]["parameters"]["pattern"] == "(unclosed"
    for what in ("failed cut", "warned grep", "empty filter", "wrong cut", "bam upload"):
        job = made[what][0]
        one = mcp.call_ok("get_job_parameters", job_id=job, api_key=api_key)
        assert rows[job]["parameters"] == {entry["path"]: entry["value"] for entry in one["parameters"]}, what
        assert rows[job]["datasets"] == {entry["path"]: entry["dataset_id"] for entry in one["datasets"]}, what
    text = mcp.call("list_jobs", {"history_id": history, "limit": 500, "include_parameters": True,
                                  "api_key": api_key}).content[0].text  # what a client showing only text reads
    assert "pattern=(unclosed" in text and "\tparameters.pattern" not in text, text[:500]
    plain = mcp.call_ok("list_jobs", history_id=history, limit=500, api_key=api_key)["jobs"]
    assert not any("parameters" in row for row in plain)  # only when asked: a listing stays small


def test_a_survey_quotes_the_tools_stderr_and_a_read_says_why_a_dataset_failed(mcp, api_key, broken):
    history, made = broken
    survey = mcp.call_ok("wait_for_jobs", history_id=history, timeout_seconds=0, since_seconds=3600, api_key=api_key)
    entries = {entry["job_id"]: entry for entry in survey["recently_finished"] + survey.get("paused", [])}
    grep = mcp.call_ok("get_job_errors", job_id=made["warned grep"][0], api_key=api_key)
    assert entries[made["warned grep"][0]]["tool_stderr_head"] == grep["tool_stderr"].strip(), entries
    assert "columns" in entries[made["failed cut"][0]]["tool_stderr_head"], entries[made["failed cut"][0]]
    assert "tool_stderr_head" not in entries[made["empty filter"][0]]  # a clean run is not quoted
    read = mcp.call_ok("peek_datasets_content", dataset_ids=[made["failed cut"][1], made["bam upload"][1]],
                       api_key=api_key)
    for entry in read["datasets"]:  # readable, empty, and said why
        details = mcp.call_ok("get_dataset_details", dataset_id=entry["dataset_id"], api_key=api_key)["dataset"]
        assert (entry["state"], entry["misc_info"]) == ("error", details["misc_info"].strip()) and entry["misc_info"]


def _every_hint(mcp, api_key, history, made) -> list[str]:
    """Every repair, resume_with and error suggestion the debugging tools give for the broken history."""
    jobs = [job for job, _ in made.values() if job]
    hints = []
    waited = mcp.call_ok("wait_for_jobs", job_ids=jobs, timeout_seconds=5, api_key=api_key)
    by_history = mcp.call_ok("wait_for_jobs", history_id=history, timeout_seconds=5, api_key=api_key)
    for entry in waited["jobs"] + by_history["recently_finished"] + by_history.get("paused", []):
        hints += [entry[key] for key in ("repair", "resume_with") if entry.get(key)]
    for job in jobs:
        report = mcp.call_ok("get_job_errors", job_id=job, api_key=api_key)
        hints += [report["repair"]] if report.get("repair") else []
        hints += [empty["why"] for empty in report["empty_outputs"]]
    for what in ("bam upload", "failed cut"):
        hints.append(mcp.call_error("update_dataset", dataset_id=made[what][1], file_type="txt", api_key=api_key))
    for what in ("bam upload", "url upload"):
        hints.append(mcp.call_error("rerun_job", job_id=made[what][0], api_key=api_key))
    return hints


def test_every_call_a_hint_names_for_the_broken_history_is_accepted(mcp, api_key, broken):
    history, made = broken
    calls = {}
    for hint in _every_hint(mcp, api_key, history, made):
        for call in calls_in(hint, HINTED_TOOLS):
            calls.setdefault(call.text, call)
    named = {call.tool for call in calls.values()}
    assert {"rerun_job", "upload_file_from_url"} <= named, calls
    # Text declared as BAM: no call can make the BAM meant, so none is named for it (no_repair says why).
    assert not any(call.tool == "create_dataset_from_text" for call in calls.values()), calls
    tool_of_job = {job: tool for job, tool in (
        (made[what][0], what) for what in made if made[what][0])}
    fixes = {"failed cut": {"columnList": "c1"}, "warned grep": {"pattern": "chr"}, "paused sort": {}}
    writes = sorted(calls.values(), key=lambda call: call.tool in ("rerun_job", "create_dataset_from_text",
                                                                   "upload_file_from_url", "delete_history_items"))
    for call in writes:
        chosen = {"file_type": "txt"}
        if call.tool == "rerun_job":
            chosen["changes"] = fixes[tool_of_job[call.arguments["job_id"]]]
        arguments = call.fill(**chosen)
        result = mcp.call(call.tool, {**arguments, "api_key": api_key})
        assert not result.is_error, (call.text, result.content[0].text)


# ---- 6. an ok job's wrong result is replaced in place ----


def test_an_ok_jobs_wrong_result_is_replaced_where_it_was(galaxy, mcp, api_key, broken):
    history, made = broken
    job, wrong = made["wrong cut"]
    before = rest(galaxy.galaxy_url, f"/api/datasets/{wrong}", api_key)
    rerun = mcp.call_ok("rerun_job", job_id=job, changes={"columnList": "c1"}, replace_outputs=True, api_key=api_key)
    [replaced] = rerun["replaced"]
    wait(mcp, api_key, [rerun["jobs"][0]["id"]])
    new = rest(galaxy.galaxy_url, f"/api/datasets/{replaced['dataset_id']}", api_key)
    old = rest(galaxy.galaxy_url, f"/api/datasets/{wrong}", api_key)
    assert (replaced["replaced_dataset_id"], new["hid"], new["name"], new["visible"]) == (
        wrong, before["hid"], before["name"], True), (rerun, new)
    assert old["visible"] is False, old  # the wrong result no longer looks current
    read = mcp.call_ok("peek_dataset_content", dataset_id=replaced["dataset_id"], api_key=api_key)
    assert read["content"] == "chr1\nchr2\nchr3\n", read
    visible = [item for item in rest(galaxy.galaxy_url, f"/api/histories/{history}/contents?v=dev&q=visible&qv=true",
                                     api_key) if item["hid"] == before["hid"]]
    assert [item["id"] for item in visible] == [replaced["dataset_id"]], visible


# ---- 3. previews say they are previews; 4. an unfinished output shows nothing of its input ----


def test_a_collections_element_peek_is_marked_a_preview_with_what_it_leaves_out(galaxy, mcp, api_key, broken):
    history, _ = broken
    long_text = "".join(f"gene{number}\t{number}\n" for number in range(1, 9))
    long = fetch(galaxy, api_key, history, {"src": "pasted", "paste_content": long_text, "ext": "tabular"})["id"]
    made = mcp.call_ok("create_collection", history_id=history, collection_type="list", api_key=api_key,
                       element_identifiers=[{"name": "long", "src": "hda", "id": long}])
    details = mcp.call_ok("get_collection_details", collection_id=made["collection_id"], api_key=api_key)
    [element] = details["collection"]["elements"]
    dataset = element["object"]
    assert dataset["peek"] and "gene8" not in dataset["peek"], dataset["peek"]  # Galaxy keeps five lines
    assert dataset["peek_preview"] == {
        "is_preview": True, "lines_at_most": 5, "data_lines": 8, "lines_left_out": 3, "file_size": len(long_text),
        "read_all": f"peek_dataset_content(dataset_id={dataset['id']!r})",
    }, dataset


def test_an_unfinished_output_shows_none_of_its_inputs_metadata(galaxy, mcp, api_key, broken):
    history, made = broken
    table = made["table"][1]
    assert rest(galaxy.galaxy_url, f"/api/datasets/{table}", api_key)["metadata_columns"] == 3
    result = mcp.call_ok("run_tool", history_id=history, tool_id="sort1", api_key=api_key,
                         inputs={"input": hda(table), "column": 2, "style": "num", "order": "ASC"})
    [output] = result["outputs"]
    assert output["state"] in ("new", "queued", "running"), output
    assert (output["metadata_columns"], output["metadata_data_lines"]) == (None, None), output
    wait(mcp, api_key, [result["jobs"][0]["id"]])
    done = mcp.call_ok("get_dataset_details", dataset_id=output["id"], api_key=api_key)["dataset"]
    assert (done["state"], done["metadata_columns"], done["metadata_data_lines"]) == ("ok", 3, 3), done
    # Its permissions name roles (the caller's own private role), not any dataset, job or history.
    roles = {role["id"] for role in rest(galaxy.galaxy_url, "/api/roles", api_key)}
    assert done["permissions"]["manage"] and set(done["permissions"]["manage"]) <= roles, (done["permissions"], roles)
