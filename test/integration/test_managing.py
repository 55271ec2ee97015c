"""Issue 16: managing what was run and made, through /api/mcp with real jobs.

list_jobs, get_job_parameters, rerun_job (with replace_outputs), cancel_job, update_dataset,
update_collection, delete_history_items and restore_history_items; update_history (issue 43). Set-up uses
MCP where a tool exists and Galaxy's REST API otherwise; every outcome is read back from Galaxy.
"""

import time

import pytest

from conftest import fetch, held_upload, missing_id, wait_for_state
from galaxy_mcp_analysis.testing import rest

TABLE = "chr1\t30\tb\nchr2\t4\ta\nchr3\t200\tc\nchr10\t4\td\n"


# ---- helpers ----


@pytest.fixture(scope="module")
def history(mcp, api_key):
    return mcp.call_ok("create_history", name="managing", api_key=api_key)["id"]


@pytest.fixture(scope="module")
def table(galaxy, api_key, history):
    dataset = fetch(galaxy, api_key, history, {"src": "pasted", "paste_content": TABLE, "ext": "tabular"})
    assert dataset["state"] == "ok", dataset
    return dataset["id"]


def hda(dataset_id: str) -> dict:
    return {"src": "hda", "id": dataset_id}


def finished(mcp, api_key, job_ids) -> list[dict]:
    waited = mcp.call_ok("wait_for_jobs", job_ids=job_ids, timeout_seconds=120, api_key=api_key)
    assert waited["all_terminal"], waited
    return waited["jobs"]


def run_to_end(mcp, api_key, history_id, tool_id, inputs) -> tuple[str, str]:
    """(job id, first output's dataset id) of a one-job run, once the job is finished."""
    result = mcp.call_ok("run_tool", history_id=history_id, tool_id=tool_id, inputs=inputs, api_key=api_key)
    [job] = result["jobs"]
    finished(mcp, api_key, [job["id"]])
    return job["id"], result["outputs"][0]["id"]


def content(mcp, api_key, dataset_id) -> str:
    read = mcp.call_ok("peek_dataset_content", dataset_id=dataset_id, api_key=api_key)
    assert read["eof"], read
    return read["content"]


def contents_view(galaxy, api_key, history_id) -> list[tuple]:
    """Every item of a history (hidden and deleted included), as Galaxy's REST API lists it."""
    keys = ("id", "hid", "name", "history_content_type", "visible", "deleted", "purged", "extension")
    return sorted(tuple(item.get(key) for key in keys)
                  for item in rest(galaxy.galaxy_url, f"/api/histories/{history_id}/contents", api_key))


def until(read, done, what: str, attempts: int = 300):
    """Read until ``done(value)`` (bounded: at most ``attempts`` reads, 0.2 s apart); returns the value."""
    for _ in range(attempts):
        value = read()
        if done(value):
            return value
        time.sleep(0.2)
    raise AssertionError(f"{what}: still {value!r}")


# ---- get_job_parameters, list_jobs ----


@pytest.fixture(scope="module")
def sorted_run(mcp, api_key, history, table):
    """sort1 with every parameter away from its default."""
    inputs = {"input": hda(table), "column": 2, "style": "num", "order": "ASC", "header_lines": 1}
    return run_to_end(mcp, api_key, history, "sort1", inputs)


def test_job_parameters_are_what_the_job_ran_with_and_rerun_to_the_same_bytes(mcp, api_key, history, table,
                                                                              sorted_run):
    job_id, output_id = sorted_run
    recorded = mcp.call_ok("get_job_parameters", job_id=job_id, api_key=api_key)
    assert (recorded["job_id"], recorded["tool_id"], recorded["state"], recorded["rerunnable"]) == (
        job_id, "sort1", "ok", True)
    inputs = recorded["inputs"]
    assert {key: inputs[key] for key in ("input", "column", "style", "order", "header_lines")} == {
        "input": hda(table), "column": 2, "style": "num", "order": "ASC", "header_lines": 1}
    assert inputs["column_set"] == []
    shown = {entry["path"]: entry["value"] for entry in recorded["parameters"]}
    assert shown["style"] == "Numerical sort" and shown["order"] == "Ascending order" and shown["header_lines"] == "1"
    assert recorded["datasets"] == [{"path": "input", "name": "Pasted Entry", "dataset_id": table, "src": "hda"}]
    assert recorded["outputs"] == [{"name": "out_file1", "dataset_id": output_id}]

    _, again = run_to_end(mcp, api_key, history, "sort1", inputs)
    first = content(mcp, api_key, output_id).splitlines()
    # The header line stays first; the rest ascends on column 2.
    assert first[0] == "chr1\t30\tb" and [line.split("\t")[1] for line in first[1:]] == ["4", "4", "200"]
    assert content(mcp, api_key, again).splitlines() == first


def test_repeat_blocks_come_back_as_lists_and_rerun_as_recorded(mcp, api_key, history, table):
    """A repeat block (sort1's column_set) is recorded as a list of dicts, and run_tool takes it back as is."""
    # On column 2 chr2 and chr10 tie (4); the block's second key (column 3, a < d) puts chr2 first, where
    # sort's last resort, the whole line, would put chr10 first: the output shows whether the block was applied.
    inputs = {"input": hda(table), "column": 2, "style": "num", "order": "ASC",
              "column_set_0|other_column": 3, "column_set_0|other_style": "alpha", "column_set_0|other_order": "ASC"}
    job_id, output_id = run_to_end(mcp, api_key, history, "sort1", inputs)
    expected = "chr2\t4\ta\nchr10\t4\td\nchr1\t30\tb\nchr3\t200\tc\n"
    assert content(mcp, api_key, output_id) == expected
    recorded = mcp.call_ok("get_job_parameters", job_id=job_id, api_key=api_key)
    assert recorded["inputs"]["column_set"] == [{"other_column": 3, "other_style": "alpha", "other_order": "ASC"}]
    assert "column_set_0|other_order" in {entry["path"] for entry in recorded["parameters"]}
    _, again = run_to_end(mcp, api_key, history, "sort1", recorded["inputs"])
    assert content(mcp, api_key, again) == expected


def test_list_jobs_filters_pages_and_flags(mcp, api_key, other_user_key, history, sorted_run):
    job_id, output_id = sorted_run
    listed = mcp.call_ok("list_jobs", history_id=history, tool_id="sort1", api_key=api_key)
    assert job_id in [job["job_id"] for job in listed["jobs"]] and listed["total"] == len(listed["jobs"])
    entry = next(job for job in listed["jobs"] if job["job_id"] == job_id)
    assert (entry["tool_id"], entry["state"], entry["exit_code"], entry["history_id"]) == ("sort1", "ok", 0, history)
    assert entry["outputs"] == [{"name": "out_file1", "dataset_id": output_id}]
    assert entry["suspected_silent_failure"] is False
    times = [job["create_time"] for job in listed["jobs"]]
    assert times == sorted(times, reverse=True)  # newest first
    everything = mcp.call_ok("list_jobs", history_id=history, api_key=api_key)
    page = mcp.call_ok("list_jobs", history_id=history, limit=1, offset=1, api_key=api_key)
    assert page["jobs"] == everything["jobs"][1:2] and page["total"] == everything["total"] >= 2
    ok_jobs = mcp.call_ok("list_jobs", history_id=history, state="ok", api_key=api_key)["jobs"]
    assert job_id in [job["job_id"] for job in ok_jobs] and all(job["state"] == "ok" for job in ok_jobs), ok_jobs
    assert mcp.call_error("list_jobs", state="finished", api_key=api_key).startswith("[VALIDATION_ERROR] state")
    # Another user's listing has none of these jobs, and their private history is refused.
    assert job_id not in [job["job_id"] for job in mcp.call_ok("list_jobs", api_key=other_user_key)["jobs"]]
    refused = mcp.call_error("list_jobs", history_id=history, api_key=other_user_key)
    assert refused.startswith(("[AUTHORIZATION_ERROR]", "[NOT_FOUND]")), refused


# ---- rerun_job ----


def test_rerun_with_one_change(galaxy, mcp, api_key, history, table):
    job_id, output_id = run_to_end(mcp, api_key, history, "Cut1",
                                   {"input": hda(table), "columnList": "c1", "delimiter": "T"})
    assert content(mcp, api_key, output_id) == "chr1\nchr2\nchr3\nchr10\n"
    rerun = mcp.call_ok("rerun_job", job_id=job_id, changes={"columnList": "c3"}, api_key=api_key)
    assert rerun["rerun_of"] == job_id and rerun["replaced_outputs"] is False
    [job] = rerun["jobs"]
    assert finished(mcp, api_key, [job["id"]])[0]["state"] == "ok"
    assert content(mcp, api_key, rerun["outputs"][0]["id"]) == "b\na\nc\nd\n"
    changed = mcp.call_ok("get_job_parameters", job_id=job["id"], api_key=api_key)["inputs"]
    assert changed == {"columnList": "c3", "delimiter": "T", "input": hda(table)}
    # Into another history of the caller's, flat names work too.
    elsewhere = mcp.call_ok("create_history", name="rerun elsewhere", api_key=api_key)["id"]
    moved = mcp.call_ok("rerun_job", job_id=job_id, changes={"delimiter": "T", "columnList": "c2"},
                        history_id=elsewhere, api_key=api_key)
    assert moved["outputs"][0]["history_id"] == elsewhere


def test_a_misspelled_change_is_refused_and_nothing_is_created(galaxy, mcp, api_key, history, table):
    """The merged inputs go through run_tool, whose preflight (issue 15) refuses unknown names."""
    job_id, _ = run_to_end(mcp, api_key, history, "Cut1", {"input": hda(table), "columnList": "c1", "delimiter": "T"})
    before = contents_view(galaxy, api_key, history)
    jobs_before = mcp.call_ok("list_jobs", history_id=history, api_key=api_key)["total"]
    error = mcp.call_error("rerun_job", job_id=job_id, changes={"columList": "c2"}, api_key=api_key)
    assert error.startswith("[VALIDATION_ERROR]") and "columList" in error and "columnList" in error, error
    assert contents_view(galaxy, api_key, history) == before
    assert mcp.call_ok("list_jobs", history_id=history, api_key=api_key)["total"] == jobs_before


def test_a_change_that_does_not_fit_the_recorded_inputs_is_refused(galaxy, mcp, api_key, history, sorted_run):
    before = contents_view(galaxy, api_key, history)
    error = mcp.call_error("rerun_job", job_id=sorted_run[0], changes={"column_set_3|other_column": 1},
                           api_key=api_key)
    assert error.startswith("[VALIDATION_ERROR] changes cannot be applied"), error
    assert "changes.column_set_3" in error and "Nothing was run." in error
    error = mcp.call_error("rerun_job", job_id=sorted_run[0], changes={"rerun_remap_job_id": sorted_run[0]},
                           api_key=api_key)
    assert error.startswith("[VALIDATION_ERROR] changes may not set rerun_remap_job_id"), error
    assert contents_view(galaxy, api_key, history) == before


def test_replace_outputs_reruns_a_failed_job_into_the_paused_jobs_waiting_on_it(galaxy, mcp, api_key, history, table):
    failing = mcp.call_ok("run_tool", history_id=history, tool_id="Cut1", api_key=api_key,
                          inputs={"input": hda(table), "columnList": "NOT-COLUMNS", "delimiter": "T"})
    [failed_job] = failing["jobs"]
    waiting = mcp.call_ok("run_tool", history_id=history, tool_id="cat1", api_key=api_key,
                          inputs={"input1": hda(failing["outputs"][0]["id"])})
    [paused_job] = waiting["jobs"]
    states = {job["job_id"]: job["state"] for job in finished(mcp, api_key, [failed_job["id"], paused_job["id"]])}
    assert states == {failed_job["id"]: "error", paused_job["id"]: "paused"}

    rerun = mcp.call_ok("rerun_job", job_id=failed_job["id"], changes={"columnList": "c2,c1"}, replace_outputs=True,
                        api_key=api_key)
    assert rerun["replaced_outputs"] is True and rerun["resumed_jobs"] == [paused_job["id"]]
    [new_job] = rerun["jobs"]
    states = {job["job_id"]: job["state"] for job in finished(mcp, api_key, [new_job["id"], paused_job["id"]])}
    assert states == {new_job["id"]: "ok", paused_job["id"]: "ok"}
    # The once-paused job read the new output: its own output is the corrected cut.
    assert content(mcp, api_key, waiting["outputs"][0]["id"]) == "30\tchr1\n4\tchr2\n200\tchr3\n4\tchr10\n"
    [replaced] = rerun["replaced"]
    assert replaced["replaced_dataset_id"] == failing["outputs"][0]["id"] and rerun["still_paused_jobs"] == []
    # An ok job's outputs can be replaced too, but not once another job read them.
    error = mcp.call_error("rerun_job", job_id=new_job["id"], replace_outputs=True, api_key=api_key)
    assert error.startswith("[CONFLICT]") and paused_job["id"] in error and "already read" in error, error


def test_replace_outputs_puts_the_fix_where_the_failed_output_was(galaxy, mcp, api_key, history, table):
    """Nothing waits on the failed output: Galaxy's remap alone would hide both the failed output and the
    new one. The new output takes the failed one's hid and name, visible; the failed one is hidden."""
    failing = mcp.call_ok("run_tool", history_id=history, tool_id="Cut1", api_key=api_key,
                          inputs={"input": hda(table), "columnList": "NOT-COLUMNS", "delimiter": "T"})
    [failed_job], [failed_output] = failing["jobs"], failing["outputs"]
    assert finished(mcp, api_key, [failed_job["id"]])[0]["state"] == "error"
    mcp.call_ok("update_dataset", dataset_id=failed_output["id"], name="genes cut", api_key=api_key)
    rerun = mcp.call_ok("rerun_job", job_id=failed_job["id"], changes={"columnList": "c1"}, replace_outputs=True,
                        api_key=api_key)
    [new_job], [new_output] = rerun["jobs"], rerun["outputs"]
    assert rerun["replaced"] == [{"output_name": "out_file1", "replaced_dataset_id": failed_output["id"],
                                  "dataset_id": new_output["id"], "hid": failed_output["hid"], "name": "genes cut",
                                  "visible": True}], rerun
    assert rerun["resumed_jobs"] == [] and rerun["still_paused_jobs"] == []
    assert finished(mcp, api_key, [new_job["id"]])[0]["state"] == "ok"
    items = {item[0]: item for item in contents_view(galaxy, api_key, history)}
    assert items[new_output["id"]][1:3] == (failed_output["hid"], "genes cut") and items[new_output["id"]][4] is True
    assert items[failed_output["id"]][4] is False
    # What an agent lists (visible items only) shows the fix at the failed output's hid.
    shown = mcp.call_ok("get_history_contents", history_id=history, limit=500, api_key=api_key)["contents"]
    at_hid = [item["id"] for item in shown if item["hid"] == failed_output["hid"] and item.get("visible", True)]
    assert at_hid == [new_output["id"]], shown
    assert content(mcp, api_key, new_output["id"]) == "chr1\nchr2\nchr3\nchr10\n"


def test_replace_outputs_refuses_a_change_that_maps_over(galaxy, mcp, api_key, history, table):
    failing = mcp.call_ok("run_tool", history_id=history, tool_id="Cut1", api_key=api_key,
                          inputs={"input": hda(table), "columnList": "NOT-COLUMNS", "delimiter": "T"})
    [failed_job] = failing["jobs"]
    finished(mcp, api_key, [failed_job["id"]])
    pair = mcp.call_ok("create_collection", history_id=history, collection_type="list", copy_elements=False,
                       element_identifiers=[{"name": name, "src": "hda", "id": table} for name in "ab"],
                       api_key=api_key)
    before = contents_view(galaxy, api_key, history)
    error = mcp.call_error("rerun_job", job_id=failed_job["id"], replace_outputs=True, api_key=api_key,
                           changes={"columnList": "c1", "input": {"src": "hdca", "id": pair["collection_id"]}})
    assert error.startswith("[VALIDATION_ERROR]") and "maps over" in error and pair["collection_id"] in error, error
    assert contents_view(galaxy, api_key, history) == before


# ---- cancel_job ----


def test_cancel_a_job_still_waiting_for_its_input(galaxy, mcp, api_key, other_user_key, history, held_files):
    """cat1 on a dataset whose upload is held open by the file server: the job waits (new) until cancelled."""
    url, released = held_files.hold("slow.tsv", b"chr1\t1\tlate\n")
    upload = mcp.call_ok("upload_file_from_url", history_id=history, url=url, file_type="tabular", api_key=api_key)
    waiting = mcp.call_ok("run_tool", history_id=history, tool_id="cat1", api_key=api_key,
                          inputs={"input1": hda(upload["outputs"][0]["id"])})
    [job] = waiting["jobs"]
    try:
        queued = mcp.call_ok("wait_for_jobs", job_ids=[job["id"]], timeout_seconds=0, api_key=api_key)["jobs"][0]
        assert queued["state"] in ("new", "queued"), queued
        # Another user cannot stop it (and learns nothing of its state).
        refused = mcp.call_error("cancel_job", job_id=job["id"], api_key=other_user_key)
        assert refused.startswith("[AUTHORIZATION_ERROR]") and "queued" not in refused and "'new'" not in refused
        cancelled = mcp.call_ok("cancel_job", job_id=job["id"], api_key=api_key)
        assert cancelled["job_id"] == job["id"] and cancelled["previous_state"] == queued["state"]
        assert cancelled["state"] in ("deleting", "deleted")
    finally:
        released.set()  # the input arrives only now: a job that was not cancelled would run on it
    finished(mcp, api_key, [upload["jobs"][0]["id"]])
    assert finished(mcp, api_key, [job["id"]])[0]["state"] == "deleted"
    output = rest(galaxy.galaxy_url, f"/api/datasets/{waiting['outputs'][0]['id']}", api_key)
    assert (output["state"], output["deleted"], output["file_size"]) == ("discarded", True, 0)
    error = mcp.call_error("cancel_job", job_id=job["id"], api_key=api_key)
    assert error.startswith("[CONFLICT]") and "'deleted'" in error, error


def test_cancel_a_finished_job_is_a_conflict_naming_its_state(mcp, api_key, sorted_run):
    error = mcp.call_error("cancel_job", job_id=sorted_run[0], api_key=api_key)
    assert error.startswith("[CONFLICT] Job") and "'ok'" in error and "Suggestion:" in error, error


# ---- update_dataset ----


def test_rename_and_txt_to_tabular_regenerates_metadata(galaxy, mcp, api_key, history):
    dataset = fetch(galaxy, api_key, history, {"src": "pasted", "paste_content": "a\t1\tx\nb\t2\ty\n", "ext": "txt"})
    assert dataset["extension"] == "txt"
    updated = mcp.call_ok("update_dataset", dataset_id=dataset["id"], name="counts.tsv", file_type="tabular",
                          tags=["name:counts"], api_key=api_key)
    assert updated["changed"] == ["name", "tags", "file_type"] and updated["metadata_job_id"]
    assert finished(mcp, api_key, [updated["metadata_job_id"]])[0]["state"] == "ok"
    details = until(lambda: rest(galaxy.galaxy_url, f"/api/datasets/{dataset['id']}", api_key),
                    lambda d: d["state"] == "ok", "metadata")
    assert (details["name"], details["extension"], details["tags"]) == ("counts.tsv", "tabular", ["name:counts"])
    assert details["metadata_columns"] == 3 and details["metadata_column_types"] == ["str", "int", "str"]


def test_an_unknown_datatype_refuses_the_whole_update(galaxy, mcp, api_key, other_user_key, history, table):
    before = rest(galaxy.galaxy_url, f"/api/datasets/{table}", api_key)
    error = mcp.call_error("update_dataset", dataset_id=table, name="renamed", file_type="tabularr", api_key=api_key)
    assert error.startswith("[VALIDATION_ERROR] file_type 'tabularr'") and "tabular" in error, error
    error = mcp.call_error("update_dataset", dataset_id=table, name="renamed", api_key=other_user_key)
    assert error.startswith("[AUTHORIZATION_ERROR]"), error
    # A tag Galaxy's tag handler would store in a form its own API then fails to list (HTTP 500 for the history).
    error = mcp.call_error("update_dataset", dataset_id=table, name="renamed", tags=["qc", "../x"], api_key=api_key)
    assert error.startswith("[VALIDATION_ERROR] 1 tag(s)") and "'../x'" in error, error
    after = rest(galaxy.galaxy_url, f"/api/datasets/{table}", api_key)
    assert (after["name"], after["extension"], after["tags"], after["update_time"]) == (
        before["name"], before["extension"], before["tags"], before["update_time"])
    assert rest(galaxy.galaxy_url, f"/api/histories/{history}/contents", api_key)  # still lists


def dataset_view(galaxy, api_key, dataset_id) -> tuple:
    """What an update could change, and when it last changed, as Galaxy's REST API reads it."""
    details = rest(galaxy.galaxy_url, f"/api/datasets/{dataset_id}", api_key)
    return tuple(details[key] for key in ("name", "extension", "deleted", "purged", "tags", "update_time"))


def test_a_dataset_in_use_by_an_unfinished_job_keeps_its_datatype(galaxy, mcp, api_key, history, table, held_files):
    """cat1 on the table and a held upload: the job waits, and the table is its input meanwhile."""
    upload_job, uploading, release = held_upload(galaxy, mcp, api_key, history, held_files, "in-use.tsv")
    try:
        run = mcp.call_ok("run_tool", history_id=history, tool_id="cat1", api_key=api_key,
                          inputs={"input1": hda(table), "queries": [{"input2": hda(uploading)}]})
        [job] = run["jobs"]
        before = dataset_view(galaxy, api_key, table)
        error = mcp.call_error("update_dataset", dataset_id=table, name="renamed", file_type="txt", api_key=api_key)
        assert error.startswith(f"[CONFLICT] Dataset {table} is an input or output of a job that has not finished"), error
        assert "Suggestion:" in error
        assert dataset_view(galaxy, api_key, table) == before
    finally:
        release.set()
    assert {job["state"] for job in finished(mcp, api_key, [upload_job, job["id"]])} == {"ok"}


def test_a_datatype_galaxy_does_not_let_change_is_refused_either_way(galaxy, mcp, api_key, history):
    """bedstrict is Galaxy's datatype with allow_datatype_change = False: neither away from it nor to it."""
    strict = fetch(galaxy, api_key, history, {"src": "pasted", "paste_content": "chr1\t1\t10\n", "ext": "bedstrict"})
    text = fetch(galaxy, api_key, history, {"src": "pasted", "paste_content": "chr1\t1\t10\n", "ext": "txt"})
    assert (strict["extension"], text["extension"]) == ("bedstrict", "txt")
    before = dataset_view(galaxy, api_key, strict["id"]), dataset_view(galaxy, api_key, text["id"])
    error = mcp.call_error("update_dataset", dataset_id=strict["id"], name="renamed", file_type="bed", api_key=api_key)
    assert error.startswith(f"[VALIDATION_ERROR] Dataset {strict['id']} is 'bedstrict', a datatype Galaxy does not"), error
    error = mcp.call_error("update_dataset", dataset_id=text["id"], name="renamed", file_type="bedstrict",
                           api_key=api_key)
    assert error.startswith("[VALIDATION_ERROR] Galaxy does not let a dataset become 'bedstrict'"), error
    assert (dataset_view(galaxy, api_key, strict["id"]), dataset_view(galaxy, api_key, text["id"])) == before


def test_a_purged_dataset_is_not_changed(galaxy, mcp, api_key):
    history_id = mcp.call_ok("create_history", name="purged update", api_key=api_key)["id"]
    dataset = fetch(galaxy, api_key, history_id, {"src": "pasted", "paste_content": "gone\n", "ext": "txt"})["id"]
    mcp.call_ok("delete_history_items", history_id=history_id, items=[hda(dataset)], purge=True, api_key=api_key)
    until(lambda: rest(galaxy.galaxy_url, f"/api/datasets/{dataset}", api_key)["purged"], bool, "purge")
    before = dataset_view(galaxy, api_key, dataset)
    error = mcp.call_error("update_dataset", dataset_id=dataset, name="renamed", api_key=api_key)
    assert error.startswith(f"[CONFLICT] Dataset {dataset} has been purged"), error
    assert dataset_view(galaxy, api_key, dataset) == before


def test_a_still_uploading_dataset_is_neither_changed_nor_deleted(galaxy, mcp, api_key, history, held_files):
    upload_job, uploading, release = held_upload(galaxy, mcp, api_key, history, held_files, "uploading.tsv")
    try:
        assert wait_for_state(galaxy, api_key, uploading, "running") == "running"  # its fetch waits on the URL
        before = dataset_view(galaxy, api_key, uploading)
        error = mcp.call_error("update_dataset", dataset_id=uploading, name="renamed", api_key=api_key)
        assert error.startswith(f"[NOT_READY] Dataset {uploading} is still uploading"), error
        error = mcp.call_error("delete_history_items", history_id=history, items=[hda(uploading)], api_key=api_key)
        assert error.startswith("[CONFLICT] Nothing was deleted") and "still uploading" in error, error
        assert dataset_view(galaxy, api_key, uploading)[:4] == before[:4]
    finally:
        release.set()
    assert finished(mcp, api_key, [upload_job])[0]["state"] == "ok"
    after = rest(galaxy.galaxy_url, f"/api/datasets/{uploading}", api_key)
    assert (after["name"], after["deleted"]) == (before[0], False)


# ---- update_collection ----


def new_collection(galaxy, mcp, api_key, history_id, name: str) -> str:
    """A one-element list made by create_collection (its element a hidden copy of a new dataset)."""
    member = fetch(galaxy, api_key, history_id, {"src": "pasted", "paste_content": f"{name}\n", "ext": "txt",
                                                     "name": name})["id"]
    made = mcp.call_ok("create_collection", history_id=history_id, collection_type="list", name=name,
                       element_identifiers=[{"name": "a", "src": "hda", "id": member}], api_key=api_key)
    return made["collection_id"]


def collection_seen(mcp, api_key, history_id, collection_id) -> tuple:
    """(name, tags, visible, deleted, update_time) as get_collection_details shows the collection, and the
    same but update_time as get_history_contents lists it (hidden and deleted items included)."""
    shown = mcp.call_ok("get_collection_details", collection_id=collection_id, api_key=api_key)["collection"]
    contents = mcp.call_ok("get_history_contents", history_id=history_id, limit=500, api_key=api_key)["contents"]
    [listed] = [item for item in contents
                if item["id"] == collection_id and item["history_content_type"] == "dataset_collection"]
    keys = ("name", "tags", "visible", "deleted")
    return tuple(shown[key] for key in keys + ("update_time",)), tuple(listed[key] for key in keys)


def test_rename_tag_and_hide_a_collection(galaxy, mcp, api_key, history):
    collection = new_collection(galaxy, mcp, api_key, history, "reads")
    updated = mcp.call_ok("update_collection", collection_id=collection, name="trimmed reads",
                          tags=["name:run1", "qc"], visible=False, api_key=api_key)
    assert updated["changed"] == ["name", "tags", "visible"]
    assert updated["collection_id"] == collection and updated["history_id"] == history
    assert (updated["name"], sorted(updated["tags"]), updated["visible"], updated["deleted"]) == (
        "trimmed reads", ["name:run1", "qc"], False, False)
    assert (updated["collection_type"], updated["element_count"], updated["populated_state"]) == ("list", 1, "ok")
    shown, listed = collection_seen(mcp, api_key, history, collection)
    assert shown[:4] == listed == ("trimmed reads", updated["tags"], False, False)
    assert listed[0] == updated["name"] and updated["hid"] in {
        item["hid"] for item in rest(galaxy.galaxy_url, f"/api/histories/{history}/contents", api_key)}
    # tags=[] removes every tag; the name stays as it was.
    again = mcp.call_ok("update_collection", collection_id=collection, tags=[], visible=True, api_key=api_key)
    assert (again["changed"], again["tags"], again["visible"], again["name"]) == (["tags", "visible"], [], True,
                                                                                   "trimmed reads")
    assert collection_seen(mcp, api_key, history, collection)[1] == ("trimmed reads", [], True, False)


def test_dataset_and_new_collection_names_keep_html_characters(galaxy, mcp, api_key, history):
    collection = new_collection(galaxy, mcp, api_key, history, "a < b & c > d")  # create_collection's name
    dataset = fetch(galaxy, api_key, history, {"src": "pasted", "paste_content": "x\n", "ext": "txt"})["id"]
    mcp.call_ok("update_dataset", dataset_id=dataset, name="e > f", api_key=api_key)
    contents = mcp.call_ok("get_history_contents", history_id=history, limit=500, api_key=api_key)["contents"]
    names = {item["id"]: item["name"] for item in contents}
    assert (names[collection], names[dataset]) == ("a < b & c > d", "e > f")


def test_a_refused_collection_update_changes_nothing(galaxy, mcp, api_key, other_user_key, history):
    collection = new_collection(galaxy, mcp, api_key, history, "kept")
    mcp.call_ok("update_collection", collection_id=collection, tags=["kept"], api_key=api_key)
    before = collection_seen(mcp, api_key, history, collection)
    for arguments, start in (
        ({"name": "  ", "tags": ["new"]}, "[VALIDATION_ERROR] name is empty."),
        ({"name": "new", "tags": ["qc", "../x"]}, "[VALIDATION_ERROR] 1 tag(s) are not in Galaxy's tag form"),
        ({"name": "new", "tags": [""]}, "[VALIDATION_ERROR] tag '' is empty"),
        ({"name": "new\x00"}, "[VALIDATION_ERROR] name contains a NUL character"),
        ({"name": "depth > 10"}, "[VALIDATION_ERROR] Galaxy would store 'depth > 10' as 'depth &gt; 10'"),
        ({}, "[VALIDATION_ERROR] Nothing to change: give at least one of name, tags, visible."),
    ):
        error = mcp.call_error("update_collection", collection_id=collection, api_key=api_key, **arguments)
        assert error.startswith(start) and "Suggestion: " in error, (arguments, error)
    error = mcp.call_error("update_collection", collection_id=collection, name="taken", visible=False,
                           api_key=other_user_key)
    assert error.startswith(f"[AUTHORIZATION_ERROR] Collection {collection} belongs to another user"), error
    unknown = missing_id(galaxy)
    error = mcp.call_error("update_collection", collection_id=unknown, name="new", api_key=api_key)
    assert error.startswith(f"[NOT_FOUND] No history collection with id {unknown}"), error
    error = mcp.call_error("update_collection", collection_id="not-an-id!", name="new", api_key=api_key)
    assert error.startswith("[VALIDATION_ERROR] collection_id 'not-an-id!' is not a valid encoded id"), error
    assert collection_seen(mcp, api_key, history, collection) == before


def test_a_deleted_collection_changes_like_a_deleted_dataset_and_a_purged_one_does_not(galaxy, mcp, api_key):
    """As update_dataset: a deleted item can still be renamed (restore_history_items brings it back as
    renamed); a purged one, or one in a purged history, is a [CONFLICT]. A collection is purged when it was
    deleted with every dataset."""
    history_id = mcp.call_ok("create_history", name="deleted collections", api_key=api_key)["id"]
    deleted, purged = (new_collection(galaxy, mcp, api_key, history_id, name) for name in ("binned", "gone"))
    dataset = fetch(galaxy, api_key, history_id, {"src": "pasted", "paste_content": "d\n", "ext": "txt"})["id"]
    mcp.call_ok("delete_history_items", history_id=history_id, items=[{"src": "hdca", "id": deleted}, hda(dataset)],
                api_key=api_key)
    mcp.call_ok("update_dataset", dataset_id=dataset, name="renamed", api_key=api_key)
    assert dataset_view(galaxy, api_key, dataset)[:3] == ("renamed", "txt", True)
    updated = mcp.call_ok("update_collection", collection_id=deleted, name="renamed", api_key=api_key)
    assert (updated["name"], updated["deleted"]) == ("renamed", True)
    assert collection_seen(mcp, api_key, history_id, deleted)[1] == ("renamed", [], True, True)

    result = mcp.call_ok("delete_history_items", history_id=history_id, items=[{"src": "hdca", "id": purged}],
                         purge=True, recursive=True, api_key=api_key)
    [member] = [item["id"] for item in rest(galaxy.galaxy_url, f"/api/histories/{history_id}/contents", api_key)
                if item.get("name") == "gone" and item["history_content_type"] == "dataset" and not item["visible"]]
    until(lambda: rest(galaxy.galaxy_url, f"/api/datasets/{member}", api_key)["purged"], bool, "purge")
    assert result["items"][0]["deleted"] is True
    before = collection_seen(mcp, api_key, history_id, purged)
    for arguments in ({"name": "back"}, {"visible": False}, {"tags": ["x"]}):
        error = mcp.call_error("update_collection", collection_id=purged, api_key=api_key, **arguments)
        assert error.startswith(f"[CONFLICT] Collection {purged} has been purged"), error
    assert collection_seen(mcp, api_key, history_id, purged) == before
    # A purged history's collections cannot change either.
    rest(galaxy.galaxy_url, f"/api/histories/{history_id}", api_key, {"purge": True}, method="DELETE")
    before = collection_seen(mcp, api_key, history_id, deleted)
    error = mcp.call_error("update_collection", collection_id=deleted, name="again", api_key=api_key)
    assert error.startswith(f"[CONFLICT] Collection {deleted} is in an archived or purged history"), error
    assert collection_seen(mcp, api_key, history_id, deleted) == before


# ---- delete / restore / purge ----


def disk_usage(galaxy, api_key) -> int:
    return rest(galaxy.galaxy_url, "/api/users/current", api_key)["total_disk_usage"]


def test_delete_restore_and_purge_frees_the_space(galaxy, mcp, api_key):
    history_id = mcp.call_ok("create_history", name="delete and purge", api_key=api_key)["id"]
    payload = "x" * 40_000 + "\n"
    dataset = fetch(galaxy, api_key, history_id, {"src": "pasted", "paste_content": payload, "ext": "txt"})
    items = [hda(dataset["id"])]
    deleted = mcp.call_ok("delete_history_items", history_id=history_id, items=items, api_key=api_key)
    assert deleted["items"] == [{"src": "hda", "id": dataset["id"], "deleted": True, "visible": True,
                                 "purged": False}]
    assert (deleted["deleted_items"], deleted["purged_items"]) == (items, [])
    restored = mcp.call_ok("restore_history_items", history_id=history_id, items=items, api_key=api_key)
    assert restored["items"][0]["deleted"] is False
    assert rest(galaxy.galaxy_url, f"/api/datasets/{dataset['id']}", api_key)["deleted"] is False

    size_before = rest(galaxy.galaxy_url, f"/api/histories/{history_id}", api_key)["size"]
    usage_before = disk_usage(galaxy, api_key)
    assert size_before >= len(payload)
    purged = mcp.call_ok("delete_history_items", history_id=history_id, items=items, purge=True, api_key=api_key)
    assert purged["items"][0]["deleted"] is True and purged["deleted_items"] == items
    # Galaxy purges in a background task: the id is listed as purged, pending exactly when the row says so.
    [entry] = purged["purged_items"]
    assert (entry["src"], entry["id"]) == ("hda", dataset["id"])
    assert entry["pending"] == purged["items"][0].get("purge_pending", False) == (not purged["items"][0]["purged"])
    until(lambda: rest(galaxy.galaxy_url, f"/api/datasets/{dataset['id']}", api_key)["purged"], bool, "purge")
    size_after = until(lambda: rest(galaxy.galaxy_url, f"/api/histories/{history_id}", api_key)["size"],
                       lambda size: size <= size_before - len(payload), "history size")
    assert size_after <= size_before - len(payload)
    assert disk_usage(galaxy, api_key) <= usage_before - len(payload)
    error = mcp.call_error("restore_history_items", history_id=history_id, items=items, api_key=api_key)
    assert error.startswith("[CONFLICT] Nothing was restored") and "purged" in error, error


def test_recursive_delete_of_a_collection_and_its_restore(galaxy, mcp, api_key):
    history_id = mcp.call_ok("create_history", name="recursive delete", api_key=api_key)["id"]
    members = [fetch(galaxy, api_key, history_id, {"src": "pasted", "paste_content": f"{n}\n", "ext": "txt"})["id"]
               for n in ("a", "b")]
    collection = mcp.call_ok("create_collection", history_id=history_id, collection_type="list", copy_elements=False,
                             element_identifiers=[{"name": n, "src": "hda", "id": i} for n, i in zip("ab", members)],
                             api_key=api_key)["collection_id"]
    items = [{"src": "hdca", "id": collection}]

    def deleted_flags():
        return {item["id"]: item["deleted"]
                for item in rest(galaxy.galaxy_url, f"/api/histories/{history_id}/contents", api_key)}

    # Without recursive only the collection goes; with it, its datasets too; a restore brings all back.
    mcp.call_ok("delete_history_items", history_id=history_id, items=items, api_key=api_key)
    assert deleted_flags() == {collection: True, members[0]: False, members[1]: False}
    result = mcp.call_ok("delete_history_items", history_id=history_id, items=items, recursive=True, api_key=api_key)
    assert result["items"][0]["datasets_deleted"] == 2
    # The ids, not only the count: the collection and each of its datasets.
    assert result["deleted_items"] == items + [hda(member) for member in members] and result["purged_items"] == []
    assert deleted_flags() == {collection: True, members[0]: True, members[1]: True}
    mcp.call_ok("restore_history_items", history_id=history_id, items=items, api_key=api_key)
    assert deleted_flags() == {collection: False, members[0]: False, members[1]: False}
    error = mcp.call_error("delete_history_items", history_id=history_id, items=items, purge=True, api_key=api_key)
    assert error.startswith("[VALIDATION_ERROR]") and "recursive=true" in error, error


def test_one_foreign_item_changes_nothing(galaxy, mcp, api_key, other_user_key):
    mine = mcp.call_ok("create_history", name="mine", api_key=api_key)["id"]
    own = fetch(galaxy, api_key, mine, {"src": "pasted", "paste_content": "mine\n", "ext": "txt"})["id"]
    theirs = mcp.call_ok("create_history", name="theirs", api_key=other_user_key)["id"]
    foreign = fetch(galaxy, other_user_key, theirs, {"src": "pasted", "paste_content": "FOREIGN\n", "ext": "txt",
                                                     "name": "FOREIGN-name"})["id"]
    elsewhere = mcp.call_ok("create_history", name="elsewhere", api_key=api_key)["id"]
    other_own = fetch(galaxy, api_key, elsewhere, {"src": "pasted", "paste_content": "x\n", "ext": "txt"})["id"]
    views = lambda: (contents_view(galaxy, api_key, mine), contents_view(galaxy, other_user_key, theirs),  # noqa: E731
                     contents_view(galaxy, api_key, elsewhere))
    before = views()
    for items, code in (([hda(own), hda(foreign)], "AUTHORIZATION_ERROR"),
                        ([hda(own), hda(other_own)], "VALIDATION_ERROR"),
                        ([hda(own), hda("0123456789abcdef")], "VALIDATION_ERROR")):
        for purge in (False, True):
            error = mcp.call_error("delete_history_items", history_id=mine, items=items, purge=purge, api_key=api_key)
            assert error.startswith(f"[{code}] Nothing was deleted"), error
            assert "FOREIGN" not in error
        assert views() == before
    error = mcp.call_error("delete_history_items", history_id=theirs, items=[hda(foreign)], api_key=api_key)
    assert error.startswith("[AUTHORIZATION_ERROR]"), error
    error = mcp.call_error("restore_history_items", history_id=mine, items=[hda(own), hda(foreign)], api_key=api_key)
    assert error.startswith("[AUTHORIZATION_ERROR] Nothing was restored"), error
    assert views() == before


# ---- update_history ----


def history_view(galaxy, api_key, history_id) -> tuple:
    shown = rest(galaxy.galaxy_url, f"/api/histories/{history_id}", api_key)
    return shown["name"], shown["annotation"], sorted(shown["tags"]), shown["update_time"]


def test_rename_annotate_and_tag_a_history(galaxy, mcp, api_key):
    history_id = mcp.call_ok("create_history", name="before", api_key=api_key)["id"]
    updated = mcp.call_ok("update_history", history_id=history_id, name="AMR isolates < 5 & more",
                          annotation="Four isolates, one run", tags=["name:amr", "qc"], api_key=api_key)
    assert updated["changed"] == ["name", "annotation", "tags"] and updated["history_id"] == history_id
    assert (updated["name"], updated["annotation"], sorted(updated["tags"]), updated["deleted"]) == (
        "AMR isolates < 5 & more", "Four isolates, one run", ["name:amr", "qc"], False)
    assert history_view(galaxy, api_key, history_id)[:3] == ("AMR isolates < 5 & more", "Four isolates, one run",
                                                             ["name:amr", "qc"])
    details = mcp.call_ok("get_history_details", history_id=history_id, api_key=api_key)["history"]
    assert details["name"] == "AMR isolates < 5 & more", details
    # One field alone leaves the others; tags=[] and annotation="" clear (Galaxy shows no annotation as null).
    again = mcp.call_ok("update_history", history_id=history_id, tags=[], annotation="", api_key=api_key)
    assert (again["changed"], again["tags"], again["name"], again["annotation"]) == (
        ["annotation", "tags"], [], "AMR isolates < 5 & more", None)
    assert history_view(galaxy, api_key, history_id)[:3] == ("AMR isolates < 5 & more", None, [])


def test_a_refused_history_update_changes_nothing(galaxy, mcp, api_key, other_user_key):
    history_id = mcp.call_ok("create_history", name="kept", api_key=api_key)["id"]
    mcp.call_ok("update_history", history_id=history_id, annotation="kept", tags=["kept"], api_key=api_key)
    before = history_view(galaxy, api_key, history_id)
    for arguments, start in (
        ({"name": "new", "tags": ["qc", "../x"]}, "[VALIDATION_ERROR] 1 tag(s) are not in Galaxy's tag form"),
        ({"name": "  ", "annotation": "new"}, "[VALIDATION_ERROR] name must have visible text"),
        ({"name": "n" * 256, "tags": ["new"]}, "[VALIDATION_ERROR] name must have visible text and at most 255"),
        ({"name": "new", "annotation": "a\x00"}, "[VALIDATION_ERROR] annotation contains a NUL character"),
        ({"annotation": "a" * 2001}, "[VALIDATION_ERROR] annotation is 2001 bytes long"),
        ({}, "[VALIDATION_ERROR] Nothing to change: give at least one of name, annotation, tags."),
    ):
        error = mcp.call_error("update_history", history_id=history_id, api_key=api_key, **arguments)
        assert error.startswith(start) and "Suggestion: " in error, (arguments, error)
    error = mcp.call_error("update_history", history_id=history_id, name="taken", api_key=other_user_key)
    assert error.startswith(f"[AUTHORIZATION_ERROR] History {history_id} belongs to another user"), error
    unknown = missing_id(galaxy)
    error = mcp.call_error("update_history", history_id=unknown, name="new", api_key=api_key)
    assert error.startswith(f"[NOT_FOUND] No history with id {unknown}"), error
    assert history_view(galaxy, api_key, history_id) == before
    # A purged history does not change.
    rest(galaxy.galaxy_url, f"/api/histories/{history_id}", api_key, {"purge": True}, method="DELETE")
    before = history_view(galaxy, api_key, history_id)
    error = mcp.call_error("update_history", history_id=history_id, name="again", api_key=api_key)
    assert error.startswith(f"[CONFLICT] History {history_id} is archived or purged"), error
    assert history_view(galaxy, api_key, history_id) == before


# ---- the surface ----


def test_the_debugging_tools_point_to_the_repair_and_declare_their_hints(mcp):
    tools = {tool.name: tool for tool in mcp.list_tools()}
    assert "get_job_parameters, the repair" in tools["get_job_errors"].description
    assert "; the repair; " in tools["wait_for_jobs"].description
    for name in ("list_jobs", "get_job_parameters"):
        hints = tools[name].annotations
        assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint) == (True, False, True), name
    for name in ("rerun_job", "cancel_job", "delete_history_items"):
        assert tools[name].annotations.destructive_hint is True, name
    for name in ("update_dataset", "update_collection", "restore_history_items", "update_history"):
        hints = tools[name].annotations
        assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint) == (False, False, True), name
