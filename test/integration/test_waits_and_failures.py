"""A wait never hides a problem and a job's errors tell the whole story (through /api/mcp on a
real Galaxy): jobs that ended before a wait by history, a paused job's reason, an upload whose
dataset failed after its job succeeded, and a datatype change Galaxy could not complete."""

from collections import Counter

import pytest

from conftest import fetch
from galaxy_mcp_analysis.testing import rest


@pytest.fixture(scope="module")
def ended(galaxy, mcp, api_key):
    """A history whose jobs all ended before anyone waited on it: an ok job that warned (grep's exit 2 on a bad
    pattern) and left its output empty."""
    history = mcp.call_ok("create_history", name="ended before the wait", api_key=api_key)["id"]
    table = fetch(galaxy, api_key, history, {"src": "pasted", "paste_content": "chr1\t5\nchr2\t3\n", "ext": "tabular"})
    grep = mcp.call_ok("run_tool", history_id=history, tool_id="Grep1", api_key=api_key,
                       inputs={"input": {"src": "hda", "id": table["id"]}, "invert": "", "pattern": "(unclosed"})
    job_id = grep["jobs"][0]["id"]
    waited = mcp.call_ok("wait_for_jobs", job_ids=[job_id], timeout_seconds=120, api_key=api_key)
    assert waited["jobs"][0]["state"] == "ok" and waited["jobs"][0]["suspected_silent_failure"], waited
    return history, job_id


def test_a_wait_by_history_after_the_jobs_ended_still_shows_the_flagged_one(mcp, api_key, ended):
    history, grep_job = ended
    waited = mcp.call_ok("wait_for_jobs", history_id=history, timeout_seconds=5, api_key=api_key)
    assert (waited["jobs"], waited["pending_at_call"], waited["all_terminal"]) == ([], [], True), waited
    assert "No job of this history was running or queued" in waited["nothing_pending"], waited
    recent = {entry["job_id"]: entry for entry in waited["recently_finished"]}
    assert grep_job in recent, waited
    flagged = recent[grep_job]
    assert (flagged["tool_id"], flagged["state"], flagged["suspected_silent_failure"]) == ("Grep1", "ok", True)
    assert [output["size"] for output in flagged["empty_outputs"]] == [0], flagged
    assert waited["since_seconds"] == 600
    # The history's count covers what ended before the call too: `state_counts` is of `jobs` only (none here).
    assert waited["state_counts"] == {} and waited["history_state_counts"] == dict(
        Counter(entry["state"] for entry in waited["recently_finished"])) and waited["history_state_counts"]["ok"] >= 1


def test_the_look_back_is_the_callers_to_name(mcp, api_key, ended):
    history, _ = ended
    none_back = mcp.call_ok("wait_for_jobs", history_id=history, timeout_seconds=0, since_seconds=0, api_key=api_key)
    assert none_back["recently_finished"] == [] and none_back["since_seconds"] == 0, none_back
    refused = mcp.call_error("wait_for_jobs", history_id=history, since_seconds=-1, api_key=api_key)
    assert refused.startswith("[VALIDATION_ERROR]") and "since_seconds" in refused, refused


def test_a_paused_job_says_why_and_what_resumes_it(galaxy, mcp, api_key, history_id):
    table = fetch(galaxy, api_key, history_id, {"src": "pasted", "paste_content": "a\t1\nb\t2\n", "ext": "tabular"})
    # Cut1 dies on a column list it cannot parse; sort1, queued on its output, is paused behind it.
    cut = mcp.call_ok("run_tool", history_id=history_id, tool_id="Cut1", api_key=api_key,
                      inputs={"input": {"src": "hda", "id": table["id"]}, "columnList": "not-a-column", "delimiter": "T"})
    cut_output = cut["outputs"][0]["id"]
    sort = mcp.call_ok("run_tool", history_id=history_id, tool_id="sort1", api_key=api_key,
                       inputs={"input": {"src": "hda", "id": cut_output}, "column": 1, "style": "alpha", "order": "ASC"})
    waited = mcp.call_ok("wait_for_jobs", job_ids=[cut["jobs"][0]["id"], sort["jobs"][0]["id"]],
                         timeout_seconds=120, api_key=api_key)
    states = {entry["tool_id"]: entry for entry in waited["jobs"]}
    assert states["Cut1"]["state"] == "error", waited
    paused = states["sort1"]
    assert paused["state"] == "paused", waited
    assert "error" in paused["paused_reason"], paused
    assert paused["errored_inputs"] == [{"dataset_id": cut_output, "name": paused["errored_inputs"][0]["name"],
                                         "job_id": cut["jobs"][0]["id"]}], paused
    assert f"rerun_job(job_id='{cut['jobs'][0]['id']}'" in paused["resume_with"], paused
    # A survey lists the stuck job under paused however long ago it paused (here: a look-back of 0 s).
    survey = mcp.call_ok("wait_for_jobs", history_id=history_id, timeout_seconds=0, since_seconds=0, api_key=api_key)
    assert [entry["job_id"] for entry in survey["paused"]] == [sort["jobs"][0]["id"]], survey
    assert survey["paused"][0]["resume_with"] == paused["resume_with"] and survey["recently_finished"] == [], survey
    assert "1 paused job(s)" in survey["nothing_pending"], survey
    assert survey["history_state_counts"] == {"paused": 1}, survey  # the paused job counted; nothing else looked back


def test_an_upload_whose_dataset_failed_shows_the_datasets_own_error_and_refuses_a_datatype_change(
    galaxy, mcp, api_key, history_id
):
    # Text declared as BAM: the upload job ends ok, Galaxy's samtools step then fails the dataset.
    made = mcp.call_ok("create_dataset_from_text", history_id=history_id, content="not a bam file\n",
                       file_type="bam", api_key=api_key)
    mcp.call_ok("wait_for_jobs", job_ids=[made["job_id"]], timeout_seconds=120, api_key=api_key)
    errors = mcp.call_ok("get_job_errors", dataset_id=made["dataset_id"], api_key=api_key)
    assert errors["state"] == "ok", errors
    [failed] = errors["failed_outputs"]
    assert (failed["dataset_id"], failed["state"]) == (made["dataset_id"], "error"), errors
    assert "samtools" in failed["message"], failed
    assert [output["dataset_id"] for output in errors["outputs"]] == [made["dataset_id"]]
    # Pasted text declared as a binary type: no file_type makes it one, so no call poses as the repair.
    assert "repair" not in errors and errors["no_repair"].startswith(
        "The upload recorded 15 characters of pasted text, 'not a bam file\\n', declared as 'bam', a binary format"), errors

    before = rest(galaxy.galaxy_url, f"/api/datasets/{made['dataset_id']}", api_key)
    refused = mcp.call_error("update_dataset", dataset_id=made["dataset_id"], file_type="txt", api_key=api_key)
    assert refused.startswith("[CONFLICT]") and "error state" in refused and "Nothing was changed" in refused, refused
    assert "get_job_errors(dataset_id=" in refused, refused  # where Galaxy's own reason is
    assert "only its owner" in refused and "create_dataset_from_text" not in refused, refused
    after = rest(galaxy.galaxy_url, f"/api/datasets/{made['dataset_id']}", api_key)
    # Accepted, Galaxy would have moved it to setting_metadata for good and changed its extension.
    assert (after["state"], after["extension"]) == ("error", before["extension"]) and before["extension"] != "txt"


def test_a_flagged_job_whose_output_was_read_is_told_to_rerun_beside_it(mcp, api_key, ended):
    """Galaxy's remap would rewire a finished reader: replace_outputs refuses, and every hint says what works."""
    history, grep_job = ended
    [output] = mcp.call_ok("get_job_errors", job_id=grep_job, api_key=api_key)["empty_outputs"]
    reader = mcp.call_ok("run_tool", history_id=history, tool_id="cat1", api_key=api_key,
                         inputs={"input1": {"src": "hda", "id": output["dataset_id"]}})["jobs"][0]["id"]
    waited = mcp.call_ok("wait_for_jobs", job_ids=[grep_job, reader], timeout_seconds=120, api_key=api_key)
    [flagged] = [entry for entry in waited["jobs"] if entry["job_id"] == grep_job]
    report = mcp.call_ok("get_job_errors", job_id=grep_job, api_key=api_key)
    assert flagged["repair"] == report["repair"], (flagged, report)
    assert report["repair"].startswith(f"rerun_job(job_id={grep_job!r}, changes=...) makes new outputs beside"), report
    assert reader in report["repair"] and "delete_history_items" in report["repair"], report
    refused = mcp.call_error("rerun_job", job_id=grep_job, replace_outputs=True, api_key=api_key)
    assert refused.startswith("[CONFLICT]") and reader in refused, refused
