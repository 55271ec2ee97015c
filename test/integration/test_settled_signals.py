"""Issue 51 item 4: signals that clear (needs_attention after a purge or a recreation) and repairs that quote
their cause (the stderr line) or offer what can be made (pasted text recreated as the type it fits)."""

import time

from galaxy_mcp_analysis.core.job_logs import cause_line
from galaxy_mcp_analysis.testing import rest
from suggested_calls import calls_in

TABLE = "chr1\t30\tgeneA\nchr2\t4\tgeneB\n"


def survey(mcp, api_key, history) -> dict:
    return mcp.call_ok("wait_for_jobs", history_id=history, timeout_seconds=300, api_key=api_key)


def entry_of(surveyed: dict, job_id: str) -> dict:
    listed = [*surveyed["jobs"], *surveyed["recently_finished"], *surveyed.get("paused", [])]
    return next(entry for entry in listed if entry["job_id"] == job_id)


def test_a_failed_jobs_repair_quotes_its_cause_and_a_purge_settles_it(galaxy, mcp, api_key):
    history = mcp.call_ok("create_history", name="settled by purge", api_key=api_key)["id"]
    table = mcp.call_ok("create_dataset_from_text", history_id=history, content=TABLE, file_type="tabular",
                        api_key=api_key)["dataset_id"]
    ran = mcp.call_ok("run_tool", history_id=history, tool_id="Cut1", api_key=api_key,
                      inputs={"input": {"src": "hda", "id": table}, "columnList": "not-a-column", "delimiter": "T"})
    job, output = ran["jobs"][0]["id"], ran["outputs"][0]["id"]
    surveyed = survey(mcp, api_key, history)
    assert job in surveyed["needs_attention"], surveyed
    report = mcp.call_ok("get_job_errors", job_id=job, api_key=api_key)
    line = cause_line(report["tool_stderr"])
    assert line and f"Its stderr names the cause: {line!r}." in report["repair"], report
    assert entry_of(surveyed, job)["repair"] == report["repair"]
    mcp.call_ok("delete_history_items", history_id=history, items=[{"src": "hda", "id": output}], purge=True,
                api_key=api_key)
    deadline = time.monotonic() + 120  # Galaxy purges the file in a Celery task
    while not rest(galaxy.galaxy_url, f"/api/datasets/{output}", api_key)["purged"]:
        assert time.monotonic() < deadline, "Galaxy did not purge the dataset"
        time.sleep(0.2)
    surveyed = survey(mcp, api_key, history)
    assert job not in surveyed["needs_attention"], surveyed
    assert entry_of(surveyed, job)["removed"] == "purged" and "repair" not in entry_of(surveyed, job)


def test_text_pasted_as_bam_is_offered_as_what_it_is_and_recreating_it_settles_it(galaxy, mcp, api_key):
    history = mcp.call_ok("create_history", name="settled by recreation", api_key=api_key)["id"]
    bam = mcp.call_ok("create_dataset_from_text", history_id=history, content=TABLE, file_type="bam",
                      api_key=api_key)
    surveyed = survey(mcp, api_key, history)
    assert bam["job_id"] in surveyed["needs_attention"], surveyed
    report = mcp.call_ok("get_job_errors", job_id=bam["job_id"], api_key=api_key)
    # Still no call poses as making the BAM meant; the text itself is offered as the type it fits.
    assert "repair" not in report and "only its owner" in report["no_repair"], report
    [recreate] = calls_in(report["recreate"], {"create_dataset_from_text"})
    assert recreate.arguments["content"] == TABLE and recreate.arguments["file_type"] not in ("bam", "txt"), recreate
    again = mcp.call_ok("create_dataset_from_text", **recreate.fill(), api_key=api_key)
    surveyed = survey(mcp, api_key, history)
    assert rest(galaxy.galaxy_url, f"/api/datasets/{again['dataset_id']}", api_key)["state"] == "ok"
    assert bam["job_id"] not in surveyed["needs_attention"], surveyed
    assert entry_of(surveyed, bam["job_id"])["recreated_by"] == again["dataset_id"]
