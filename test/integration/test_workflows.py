"""Issue 21: workflows an agent can check, follow and write, through /api/mcp on a real Galaxy.

Workflows under test are made through Galaxy's REST API (``POST /api/workflows`` with a Format 2
document), so what is proved about our tools does not lean on our own create_workflow, except
where create_workflow itself is under test.
"""

import json
import urllib.parse

import pytest
import yaml

from conftest import (
    fetch,
    missing_id,
)
from galaxy_mcp_analysis.testing import rest

SORT_WORKFLOW = {
    "class": "GalaxyWorkflow",
    "label": "sort a table",
    "inputs": {"table": {"type": "data", "format": "tabular"}},
    "steps": {
        "sort": {
            "tool_id": "sort1",
            "in": {"input": "table"},
            "state": {"column": "1", "style": "num", "order": "ASC", "header_lines": 0},
        }
    },
}

#: A middle step that fails: Cut1 dies on a column list it cannot parse; sort waits (paused) behind it.
FAILING_MIDDLE = {
    "class": "GalaxyWorkflow",
    "label": "cut then sort",
    "inputs": {"table": {"type": "data", "format": "tabular"}},
    "steps": {
        "cut": {"tool_id": "Cut1", "in": {"input": "table"}, "state": {"columnList": "not-a-column", "delimiter": "T"}},
        "sort": {"tool_id": "sort1", "in": {"input": "cut/out_file1"}, "state": {"column": "1", "style": "alpha", "order": "ASC"}},
    },
}

ROWS = "chr1\t5\tb\nchr2\t3\ta\nchr3\t9\tc\n"


def upload_workflow(galaxy, api_key, document) -> str:
    # fill_defaults: Galaxy stores the parameters a document leaves out at the tool's defaults.
    return rest(galaxy.galaxy_url, "/api/workflows", api_key, {"workflow": document, "fill_defaults": True})["id"]


@pytest.fixture(scope="module")
def wf_history(mcp, api_key):
    return mcp.call_ok("create_history", name="workflows", api_key=api_key)["id"]


@pytest.fixture(scope="module")
def table(galaxy, api_key, wf_history):
    dataset = fetch(galaxy, api_key, wf_history, {"src": "pasted", "paste_content": ROWS, "ext": "tabular", "name": "rows"})
    assert dataset["state"] == "ok", dataset
    return dataset["id"]


@pytest.fixture(scope="module")
def sort_workflow(galaxy, api_key):
    return upload_workflow(galaxy, api_key, SORT_WORKFLOW)


def content(galaxy, api_key, dataset_id) -> bytes:
    import urllib.request

    request = urllib.request.Request(
        f"{galaxy.galaxy_url}/api/datasets/{dataset_id}/display?preview=false", headers={"x-api-key": api_key}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.read()


def invocations_of(galaxy, api_key, workflow_id) -> list:
    return rest(galaxy.galaxy_url, f"/api/invocations?workflow_id={workflow_id}", api_key)


def finished_invocation(mcp, api_key, invocation_id) -> dict:
    waited = mcp.call_ok("wait_for_jobs", invocation_id=invocation_id, timeout_seconds=120, api_key=api_key)
    assert waited["all_terminal"] and waited["invocation_scheduled"], waited
    return mcp.call_ok("get_invocation_details", invocation_id=invocation_id, api_key=api_key)


# ---- what a workflow takes ----


def test_input_schema_names_inputs_by_label_with_a_template(mcp, api_key, sort_workflow):
    schema = mcp.call_ok("get_workflow_input_schema", workflow_id=sort_workflow, api_key=api_key)
    [table_input] = schema["inputs"]
    assert table_input == {**table_input, "label": "table", "step_index": 0, "kind": "dataset", "optional": False}
    assert table_input["datatypes"] == ["tabular"]
    [sort_step] = schema["parameters"]
    assert (sort_step["label"], sort_step["tool_id"], sort_step["connected"]) == ("sort", "sort1", ["input"])
    assert schema["template"]["inputs"] == {"table": {"src": "hda", "id": "<dataset_id>"}}


# ---- the two failures of the issue ----


#: ROWS sorted on column 2, numbers descending. The stored step sorts on column 1 ascending, and ROWS
#: are in neither order, so only a run that applied the step parameters gives this output.
ROWS_BY_COLUMN_2_DESCENDING = b"chr3\t9\tc\nchr1\t5\tb\nchr2\t3\ta\n"


def test_inputs_keyed_by_label_are_invoked_and_followed_to_the_end(galaxy, mcp, api_key, wf_history, table, sort_workflow):
    invoked = mcp.call_ok(
        "invoke_workflow", workflow_id=sort_workflow, history_id=wf_history,
        inputs={"table": {"src": "hda", "id": table}}, parameters={"sort": {"column": "2", "order": "DESC"}},
        api_key=api_key,
    )
    assert invoked["inputs_by"] == "label" and invoked["mapped_over"] == []
    details = finished_invocation(mcp, api_key, invoked["id"])
    progress = details["progress"]
    assert progress["terminal"] and progress["state"] == "ok", progress
    sort_step = next(step for step in progress["steps"] if step["label"] == "sort")
    assert sort_step["jobs"] == {"ok": 1} and progress["failed_steps"] == []
    output = sort_step["outputs"]["out_file1"]["id"]
    assert content(galaxy, api_key, output) == ROWS_BY_COLUMN_2_DESCENDING
    by_index = mcp.call_ok(
        "check_workflow_inputs", workflow_id=sort_workflow, history_id=wf_history,
        inputs={"0": {"src": "hda", "id": table}}, parameters={"1": {"colum": "2"}}, api_key=api_key,
    )
    assert by_index["inputs_by"] == "step_index", by_index
    assert [error["path"] for error in by_index["errors"]] == ["parameters.1.colum"]  # step 1 is "sort": keyed by index
    invoke = {tool.name: tool for tool in mcp.list_tools()}["invoke_workflow"]
    described = invoke.input_schema["properties"]["parameters"]["description"]
    assert described == "Tool parameters keyed by step label or index.", described


#: The sort workflow's second version: column 2, numbers descending (the first sorts on column 1 ascending).
SORT_WORKFLOW_V2 = {
    **SORT_WORKFLOW,
    "steps": {"sort": {**SORT_WORKFLOW["steps"]["sort"],
                       "state": {"column": "2", "style": "num", "order": "DESC", "header_lines": 0}}},
}


def test_a_workflow_with_two_versions_is_named_by_its_stored_id_and_runs_its_latest(
    galaxy, mcp, api_key, wf_history, table
):
    """Galaxy names an invocation's workflow by the version it ran; every tool names it by the stored
    workflow's id (the one they take). The ids coincide for a workflow's first version in a fresh database,
    so the workflow gets a second version first, and the test checks the two ids differ before relying on it."""
    gx = galaxy.galaxy_url
    # A workflow with two versions first puts version ids ahead of stored ids, so that an id mapped twice
    # (version -> stored -> read again as a version) names another workflow, even in a fresh database.
    spacer = upload_workflow(galaxy, api_key, {**SORT_WORKFLOW, "label": "spacer"})
    rest(gx, f"/api/workflows/{spacer}", api_key,
         {"workflow": {**SORT_WORKFLOW_V2, "label": "spacer"}, "fill_defaults": True}, method="PUT")
    workflow = upload_workflow(galaxy, api_key, {**SORT_WORKFLOW, "label": "two versions"})
    rest(gx, f"/api/workflows/{workflow}", api_key,
         {"workflow": {**SORT_WORKFLOW_V2, "label": "two versions"}, "fill_defaults": True}, method="PUT")
    assert len(rest(gx, f"/api/workflows/{workflow}/versions", api_key)) == 2
    invoked = mcp.call_ok("invoke_workflow", workflow_id=workflow, history_id=wf_history,
                          inputs={"table": {"src": "hda", "id": table}}, api_key=api_key)
    version = rest(gx, f"/api/invocations/{invoked['id']}", api_key)["workflow_id"]  # Galaxy's own view
    assert version != workflow, "the version's id must differ from the stored workflow's for this test to tell them apart"
    assert rest(gx, f"/api/workflows/{version}?instance=true", api_key)["id"] == workflow  # a version of it
    assert invoked["workflow_id"] == workflow, invoked
    details = finished_invocation(mcp, api_key, invoked["id"])  # wait_for_jobs names no workflow
    assert details["invocation"]["workflow_id"] == workflow, details["invocation"]
    listed = mcp.call_ok("get_invocations", workflow_id=workflow, api_key=api_key)
    assert [(row["id"], row["workflow_id"]) for row in listed["invocations"]] == [(invoked["id"], workflow)], listed
    sort_step = next(step for step in details["progress"]["steps"] if step["label"] == "sort")
    # Only the second version's step sorts ROWS this way (the first sorts on column 1 ascending).
    assert content(galaxy, api_key, sort_step["outputs"]["out_file1"]["id"]) == ROWS_BY_COLUMN_2_DESCENDING


def test_a_misspelled_step_parameter_is_refused_with_path_and_closest_name(galaxy, mcp, api_key, wf_history, table, sort_workflow):
    """Needs the tool-input capability (issue 15): tool_state_problems checks step parameters."""
    before = len(invocations_of(galaxy, api_key, sort_workflow))
    text = mcp.call_error(
        "invoke_workflow", workflow_id=sort_workflow, history_id=wf_history,
        inputs={"table": {"src": "hda", "id": table}}, parameters={"sort": {"colum": "2"}}, api_key=api_key,
    )
    assert text.startswith("[VALIDATION_ERROR]") and "parameters.sort.colum" in text and "'column'" in text, text
    assert "Nothing was invoked" in text
    assert len(invocations_of(galaxy, api_key, sort_workflow)) == before


def test_a_purged_history_is_refused_in_our_words_before_galaxy_is_asked(galaxy, mcp, api_key, table, sort_workflow):
    gone = mcp.call_ok("create_history", name="purged before the run", api_key=api_key)["id"]
    rest(galaxy.galaxy_url, f"/api/histories/{gone}?purge=true", api_key, method="DELETE")
    before = len(invocations_of(galaxy, api_key, sort_workflow))
    for tool in ("check_workflow_inputs", "invoke_workflow"):
        text = mcp.call_error(tool, workflow_id=sort_workflow, history_id=gone,
                              inputs={"table": {"src": "hda", "id": table}}, api_key=api_key)
        assert text.startswith(f"[CONFLICT] History {gone} is purged or archived") and "create_history" in text, text
    assert len(invocations_of(galaxy, api_key, sort_workflow)) == before


def test_every_input_problem_is_reported_at_once_and_nothing_is_invoked(galaxy, mcp, api_key, wf_history, table, sort_workflow):
    before = len(invocations_of(galaxy, api_key, sort_workflow))
    text = mcp.call_error(
        "invoke_workflow", workflow_id=sort_workflow, history_id=wf_history,
        inputs={"tabel": {"src": "hda", "id": table}}, parameters={"srot": {"column": 2}}, api_key=api_key,
    )
    assert "inputs.tabel" in text and "Did you mean 'table'" in text, text
    assert "inputs.table" in text and "missing_required" in text, text
    assert "parameters.srot" in text and "'sort'" in text, text
    assert "3 problems" in text
    assert len(invocations_of(galaxy, api_key, sort_workflow)) == before
    checked = mcp.call_ok(
        "check_workflow_inputs", workflow_id=sort_workflow, history_id=wf_history,
        inputs={"tabel": {"src": "hda", "id": table}}, api_key=api_key,
    )
    assert not checked["valid"]
    assert {error["rule"] for error in checked["errors"]} == {"unknown_input", "missing_required"}


def test_collection_rules_and_datatypes_are_galaxys(galaxy, mcp, api_key, wf_history, table):
    text_data = fetch(galaxy, api_key, wf_history, {"src": "pasted", "paste_content": "just words\n", "ext": "txt"})
    image = fetch(galaxy, api_key, wf_history, {"src": "pasted", "paste_content": "not a picture\n", "ext": "png"})
    pair = mcp.call_ok(
        "create_collection", history_id=wf_history, collection_type="paired", api_key=api_key,
        element_identifiers=[{"name": "forward", "src": "hda", "id": table}, {"name": "reverse", "src": "hda", "id": table}],
    )
    tables = mcp.call_ok(
        "create_collection", history_id=wf_history, collection_type="list", api_key=api_key,
        element_identifiers=[{"name": "a", "src": "hda", "id": table}, {"name": "b", "src": "hda", "id": table}],
    )
    workflow = upload_workflow(galaxy, api_key, {
        "class": "GalaxyWorkflow",
        "inputs": {
            "samples": {"type": "collection", "collection_type": "list"},
            "table": {"type": "data", "format": "tabular"},
            "count": {"type": "int", "optional": True},
            "limit": {"type": "int", "default": 5},
        },
        "steps": {"cat": {"tool_id": "cat1", "in": {"input1": "table"}},
                  "cat_each": {"tool_id": "cat1", "in": {"input1": "samples"}}},  # maps over the list
    })
    checked = mcp.call_ok(
        "check_workflow_inputs", workflow_id=workflow, history_id=wf_history, api_key=api_key,
        inputs={"samples": {"src": "hdca", "id": pair["collection_id"]}, "table": {"src": "hda", "id": image["id"]},
                "count": "many"},
    )
    errors = {error["path"]: error["rule"] for error in checked["errors"]}
    assert errors == {
        "inputs.samples": "collection_type_not_accepted",
        "inputs.table": "datatype_not_accepted",
        "inputs.count": "wrong_type",
    }, checked
    mapped = mcp.call_ok(
        "check_workflow_inputs", workflow_id=workflow, history_id=wf_history, api_key=api_key,
        inputs={"samples": {"src": "hdca", "id": tables["collection_id"]}, "table": {"src": "hdca", "id": tables["collection_id"]}},
    )
    assert mapped["valid"], mapped
    assert mapped["mapped_over"] == [{"input": "table", "collection_type": "list", "over": "dataset"}]
    steps = {step["label"]: step for step in mapped["steps"]}  # cat_each maps over the list given as samples
    assert {label: (step["jobs_expected"], step["saved"]) for label, step in steps.items()} == {
        "cat": (2, []), "cat_each": (2, [])}, mapped["steps"]  # cat1 has no parameter but its (connected) data inputs
    # What Galaxy runs with for the inputs left out: the default, or nothing for an optional one.
    assert (mapped["resolved_inputs"]["limit"], mapped["resolved_inputs"]["count"]) == (5, None), mapped
    assert mapped["defaulted_inputs"] == ["count", "limit"]
    # One datatype rule for tools and workflows: a txt dataset (a more general type) fits a tabular input in
    # both, as Galaxy runs it; a png fits neither.
    for dataset, fits in ((text_data["id"], True), (image["id"], False)):
        as_workflow_input = mcp.call_ok(
            "check_workflow_inputs", workflow_id=workflow, history_id=wf_history, api_key=api_key,
            inputs={"samples": {"src": "hdca", "id": tables["collection_id"]}, "table": {"src": "hda", "id": dataset}})
        as_tool_input = mcp.call_ok("check_tool_inputs", tool_id="sort1", history_id=wf_history, api_key=api_key,
                                    inputs={"input": {"src": "hda", "id": dataset}})
        refused_as = [[error["path"] for error in result["errors"] if error["rule"] == "datatype_not_accepted"]
                      for result in (as_workflow_input, as_tool_input)]
        assert refused_as == ([[], []] if fits else [["inputs.table"], ["inputs.input"]]), refused_as
    # ...and Galaxy agrees: invoked with the txt dataset as its tabular input, the workflow runs to the end.
    invoked = mcp.call_ok("invoke_workflow", workflow_id=workflow, history_id=wf_history, api_key=api_key, inputs={
        "samples": {"src": "hdca", "id": tables["collection_id"]}, "table": {"src": "hda", "id": text_data["id"]}})
    progress = finished_invocation(mcp, api_key, invoked["id"])["progress"]
    assert progress["terminal"] and progress["state"] == "ok" and progress["jobs"] == {"ok": 3}, progress
    given_dataset = mcp.call_ok(
        "check_workflow_inputs", workflow_id=workflow, history_id=wf_history, api_key=api_key,
        inputs={"samples": {"src": "hda", "id": table}, "table": {"src": "hda", "id": table}},
    )
    assert [error["path"] for error in given_dataset["errors"]] == ["inputs.samples"]


# ---- progress ----


def test_progress_names_the_failed_middle_step_and_its_jobs(galaxy, mcp, api_key, wf_history, table):
    workflow = upload_workflow(galaxy, api_key, FAILING_MIDDLE)
    invoked = mcp.call_ok("invoke_workflow", workflow_id=workflow, history_id=wf_history,
                          inputs={"table": {"src": "hda", "id": table}}, api_key=api_key)
    details = finished_invocation(mcp, api_key, invoked["id"])
    progress = details["progress"]
    assert progress["terminal"] and progress["state"] == "failed", progress
    [failed] = progress["failed_steps"]
    assert failed["label"] == "cut" and len(failed["job_ids"]) == 1
    sort_step = next(step for step in progress["steps"] if step["label"] == "sort")
    assert sort_step["state"] == "paused", sort_step
    errors = mcp.call_ok("get_job_errors", job_id=failed["job_ids"][0], api_key=api_key)
    assert errors["state"] == "error" and "not-a-column" in errors["tool_stderr"] + errors["tool_stdout"], errors



def test_rerun_with_replaced_outputs_lets_the_paused_step_finish(galaxy, mcp, api_key, wf_history, table):
    """Needs rerun_job(replace_outputs=True) (issue 16)."""
    workflow = upload_workflow(galaxy, api_key, FAILING_MIDDLE)
    invoked = mcp.call_ok("invoke_workflow", workflow_id=workflow, history_id=wf_history,
                          inputs={"table": {"src": "hda", "id": table}}, api_key=api_key)
    progress = finished_invocation(mcp, api_key, invoked["id"])["progress"]
    [failed] = progress["failed_steps"]
    rerun = mcp.call_ok("rerun_job", job_id=failed["job_ids"][0], changes={"columnList": "c1,c3"},
                        replace_outputs=True, api_key=api_key)
    mcp.call_ok("wait_for_jobs", job_ids=[job["id"] for job in rerun["jobs"]], timeout_seconds=120, api_key=api_key)
    progress = finished_invocation(mcp, api_key, invoked["id"])["progress"]
    sort_step = next(step for step in progress["steps"] if step["label"] == "sort")
    assert sort_step["state"] == "ok", progress


#: The sort workflow as a subworkflow step, then a tool step on its output.
NESTED = {
    "class": "GalaxyWorkflow",
    "label": "sort inside, then cut",
    "inputs": {"table": {"type": "data", "format": "tabular"}},
    "steps": {
        "inner": {
            "run": {
                "class": "GalaxyWorkflow",
                "inputs": {"rows": {"type": "data", "format": "tabular"}},
                "outputs": {"sorted": {"outputSource": "sort/out_file1"}},
                "steps": {"sort": {"tool_id": "sort1", "in": {"input": "rows"},
                                   "state": {"column": "2", "style": "num", "order": "ASC", "header_lines": 0}}},
            },
            "in": {"rows": "table"},
        },
        "cut": {"tool_id": "Cut1", "in": {"input": "inner/sorted"}, "state": {"columnList": "c3", "delimiter": "T"}},
    },
}


def test_a_subworkflow_step_is_checked_waited_for_and_followed(galaxy, mcp, api_key, wf_history, table):
    workflow = upload_workflow(galaxy, api_key, NESTED)
    inputs = {"table": {"src": "hda", "id": table}}
    checked = mcp.call_ok("check_workflow_inputs", workflow_id=workflow, history_id=wf_history, inputs=inputs,
                          api_key=api_key)
    assert checked["valid"], checked
    expected = {step["label"]: step for step in checked["steps"]}
    assert expected["inner"]["subworkflow"] and expected["inner"]["jobs_expected"] == 1, checked["steps"]
    assert expected["cut"]["jobs_expected"] == 1
    refused = mcp.call_ok("check_workflow_inputs", workflow_id=workflow, history_id=wf_history, inputs=inputs,
                          parameters={"inner": {"column": "1"}}, api_key=api_key)
    [problem] = refused["errors"]
    assert problem["path"] == "parameters.inner" and "subworkflow step" in problem["message"], problem
    invoked = mcp.call_ok("invoke_workflow", workflow_id=workflow, history_id=wf_history, inputs=inputs,
                          api_key=api_key)
    waited = mcp.call_ok("wait_for_jobs", invocation_id=invoked["id"], timeout_seconds=120, api_key=api_key)
    # The subworkflow's sort job is waited for too, not only the top level's cut.
    assert waited["all_terminal"] and waited["invocation_scheduled"] and len(waited["jobs"]) == 2, waited
    progress = mcp.call_ok("get_invocation_details", invocation_id=invoked["id"], api_key=api_key)["progress"]
    assert progress["terminal"] and progress["state"] == "ok" and progress["jobs"] == {"ok": 2}, progress
    inner = next(step for step in progress["steps"] if step["label"] == "inner")
    assert (inner["type"], inner["state"], inner["jobs"]) == ("subworkflow", "ok", {"ok": 1}), inner
    assert inner["subworkflow_invocation_id"] and len(inner["job_ids"]) == 1, inner
    cut = next(step for step in progress["steps"] if step["label"] == "cut")
    assert content(galaxy, api_key, cut["outputs"]["out_file1"]["id"]) == b"a\nb\nc\n"
    # The wait already named the outputs to read next, as progress does (the subworkflow's own are in its invocation).
    [from_wait] = [output for output in waited["invocation_outputs"] if output["label"] == "cut"]
    assert (from_wait["output_name"], from_wait["src"], from_wait["id"]) == (
        "out_file1", "hda", cut["outputs"]["out_file1"]["id"]), waited["invocation_outputs"]


def post_tool_call(galaxy, api_key, arguments: dict, progress_token: str | None = None):
    """A raw POST of one tools/call of wait_for_jobs (no SDK), with or without a progress token."""
    import httpx

    params = {"name": "wait_for_jobs", "arguments": arguments}
    if progress_token is not None:
        params["_meta"] = {"progressToken": progress_token}
    return httpx.post(
        galaxy.mcp_url,
        json={"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params},
        headers={
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2025-06-18",
            "x-api-key": api_key,
        },
        timeout=120,
    )


def test_a_wait_reports_progress_only_when_the_request_asks(galaxy, mcp, api_key, wf_history, held_files):
    """MCP progress: a request with a progressToken gets SSE with notifications/progress; one
    without keeps the plain JSON body (patch mcp-json-responses, chosen per request)."""
    import threading

    from conftest import held_upload

    upload_job, uploaded, release = held_upload(galaxy, mcp, api_key, wf_history, held_files, "progress.tsv")
    ran = mcp.call_ok("run_tool", history_id=wf_history, tool_id="cat1",
                      inputs={"input1": {"src": "hda", "id": uploaded}}, api_key=api_key)
    job_ids = [upload_job, ran["jobs"][0]["id"]]
    threading.Timer(2.0, release.set).start()  # both still running when the wait starts
    result, reported = mcp.call_with_progress("wait_for_jobs", {"job_ids": job_ids, "timeout_seconds": 110,
                                                                 "api_key": api_key})
    assert not result.is_error and result.structured_content["all_terminal"], result
    progress = [done for done, _, _ in reported]
    assert len(reported) >= 2 and progress == sorted(set(progress)), reported  # strictly increasing
    assert reported[0][:2] == (0, 2) and reported[-1][:2] == (2, 2), reported
    assert reported[-1][2] == "2/2 jobs finished: 2 ok", reported

    plain = post_tool_call(galaxy, api_key, {"job_ids": job_ids, "timeout_seconds": 5})
    assert plain.headers["content-type"] == "application/json", plain.headers
    assert plain.json()["result"]["structuredContent"]["all_terminal"] is True
    streamed = post_tool_call(galaxy, api_key, {"job_ids": job_ids, "timeout_seconds": 5}, progress_token="t-1")
    assert streamed.headers["content-type"].startswith("text/event-stream"), streamed.headers
    messages = [json.loads(line[len("data:"):]) for line in streamed.text.splitlines() if line.startswith("data:") and line[5:].strip()]
    assert [m.get("method") for m in messages] == ["notifications/progress", None], messages
    assert messages[0]["params"] == {"progressToken": "t-1", "progress": 2, "total": 2,
                                     "message": "2/2 jobs finished: 2 ok"}, messages
    assert messages[1]["id"] == 7 and messages[1]["result"]["structuredContent"]["all_terminal"] is True



# ---- writing workflows ----


def run_and_wait(mcp, api_key, history_id, tool_id, inputs) -> dict:
    result = mcp.call_ok("run_tool", history_id=history_id, tool_id=tool_id, inputs=inputs, api_key=api_key)
    waited = mcp.call_ok("wait_for_jobs", job_ids=[job["id"] for job in result["jobs"]], timeout_seconds=120, api_key=api_key)
    assert all(job["state"] == "ok" for job in waited["jobs"]), waited
    return result


def by_hand(mcp, api_key, history_id, collection_id) -> str:
    """pastes -> collection -> sort mapped over it -> head of each sorted table; returns the last collection."""
    sorted_ = run_and_wait(mcp, api_key, history_id, "sort1", {
        "input": {"src": "hdca", "id": collection_id}, "column": "2", "style": "num", "order": "DESC"})
    [sorted_collection] = sorted_["implicit_collections"]
    headed = run_and_wait(mcp, api_key, history_id, "Show beginning1", {
        "input": {"src": "hdca", "id": sorted_collection["id"]}, "lineNum": 2})
    [headed_collection] = headed["implicit_collections"]
    return headed_collection["id"]


def samples(mcp, api_key, history_id, texts: dict[str, str], name: str) -> str:
    elements = []
    for element, text in texts.items():
        made = mcp.call_ok("create_dataset_from_text", history_id=history_id, content=text, file_type="tabular",
                           name=element, api_key=api_key)
        elements.append({"name": element, "src": "hda", "id": made["dataset_id"]})
    mcp.call_ok("wait_for_jobs", history_id=history_id, timeout_seconds=120, api_key=api_key)
    return mcp.call_ok("create_collection", history_id=history_id, collection_type="list", name=name,
                       element_identifiers=elements, api_key=api_key)["collection_id"]


def element_bytes(galaxy, mcp, api_key, collection_id) -> dict[str, bytes]:
    details = rest(galaxy.galaxy_url, f"/api/dataset_collections/{collection_id}?instance_type=history", api_key)
    return {element["element_identifier"]: content(galaxy, api_key, element["object"]["id"]) for element in details["elements"]}


def test_an_analysis_run_by_hand_is_saved_as_a_workflow_that_reproduces_it(galaxy, mcp, api_key):
    history = mcp.call_ok("create_history", name="reproducibility", api_key=api_key)["id"]
    first = samples(mcp, api_key, history, {"s1": "a\t3\nb\t1\nc\t2\n", "s2": "x\t10\ny\t30\nz\t20\n"}, "samples")
    by_hand_output = by_hand(mcp, api_key, history, first)
    saved = mcp.call_ok("create_workflow_from_history", history_id=history, name="sort and head", api_key=api_key)
    assert [(entry["label"], entry["kind"]) for entry in saved["inputs"]] == [("samples", "collection")], saved
    assert [step["tool_id"] for step in saved["steps"] if step["type"] == "tool"] == ["sort1", "Show beginning1"]
    text = json.dumps(saved["definition"])
    for internal in ("__workflow_invocation_uuid__", "chromInfo", "__input_ext", str(galaxy.data_dir)):
        assert internal not in text, internal

    # The same inputs give byte-identical outputs.
    invoked = mcp.call_ok("invoke_workflow", workflow_id=saved["workflow_id"], history_id=history,
                          inputs={"samples": {"src": "hdca", "id": first}}, api_key=api_key)
    progress = finished_invocation(mcp, api_key, invoked["id"])["progress"]
    assert progress["state"] == "ok", progress
    last = progress["steps"][-1]["outputs"]["out_file1"]["id"]
    expected = element_bytes(galaxy, mcp, api_key, by_hand_output)
    assert element_bytes(galaxy, mcp, api_key, last) == expected and len(expected) == 2

    # A new input gives what running the tools by hand on it gives.
    second = samples(mcp, api_key, history, {"t1": "p\t7\nq\t8\nr\t9\n"}, "new samples")
    invoked = mcp.call_ok("invoke_workflow", workflow_id=saved["workflow_id"], history_id=history,
                          inputs={"samples": {"src": "hdca", "id": second}}, api_key=api_key)
    progress = finished_invocation(mcp, api_key, invoked["id"])["progress"]
    from_workflow = element_bytes(galaxy, mcp, api_key, progress["steps"][-1]["outputs"]["out_file1"]["id"])
    assert from_workflow == element_bytes(galaxy, mcp, api_key, by_hand(mcp, api_key, history, second))
    assert from_workflow == {"t1": b"r\t9\nq\t8\n"}

    # The definition goes back in unchanged.
    checked = mcp.call_ok("create_workflow", definition=saved["definition"], dry_run=True, api_key=api_key)
    assert checked["valid"], checked
    recreated = mcp.call_ok("create_workflow", definition=saved["definition"], api_key=api_key)
    assert [step["tool_id"] for step in recreated["steps"]] == [step["tool_id"] for step in saved["steps"]]


BROKEN = """
class: GalaxyWorkflow
label: three problems
inputs:
  table:
    type: data
    format: tabular
steps:
  sort:
    tool_id: sort1
    in:
      input: table
    state:
      colum: "2"
      style: num
      order: SIDEWAYS
  head:
    tool_id: Show beginning1
    in:
      input: sort/no_such_output
    state:
      lineNum: 1
"""


def test_create_workflow_refuses_three_problems_at_once_then_round_trips(galaxy, mcp, api_key, wf_history, table):
    """The state problems need the tool-input capability (issue 15); the connection one does not."""
    before = rest(galaxy.galaxy_url, "/api/workflows", api_key)
    text = mcp.call_error("create_workflow", definition=BROKEN, api_key=api_key)
    assert "steps.head.in.input" in text and "no_such_output" in text and "out_file1" in text, text
    assert "steps.sort.state.colum" in text and "'column'" in text, text
    assert "steps.sort.state.order" in text and "SIDEWAYS" in text, text
    assert len(rest(galaxy.galaxy_url, "/api/workflows", api_key)) == len(before)
    fixed = yaml.safe_load(BROKEN)
    fixed["steps"]["sort"]["state"] = {"column": "2", "style": "num", "order": "DESC"}
    fixed["steps"]["head"]["in"]["input"] = "sort/out_file1"
    created = mcp.call_ok("create_workflow", definition=yaml.safe_dump(fixed), api_key=api_key)
    invoked = mcp.call_ok("invoke_workflow", workflow_id=created["workflow_id"], history_id=wf_history,
                          inputs={"table": {"src": "hda", "id": table}}, api_key=api_key)
    progress = finished_invocation(mcp, api_key, invoked["id"])["progress"]
    assert progress["state"] == "ok", progress
    head = progress["steps"][-1]["outputs"]["out_file1"]["id"]
    assert content(galaxy, api_key, head) == b"chr3\t9\tc\n"


def test_a_bad_connection_is_refused_and_dry_run_saves_nothing(galaxy, mcp, api_key):
    broken = yaml.safe_load(BROKEN)
    broken["steps"]["sort"]["state"] = {"column": "2"}
    before = rest(galaxy.galaxy_url, "/api/workflows", api_key)
    checked = mcp.call_ok("create_workflow", definition=broken, dry_run=True, api_key=api_key)
    assert not checked["valid"]
    assert [(error["path"], error["rule"]) for error in checked["errors"]] == [("steps.head.in.input", "bad_connection")]
    assert "out_file1" in checked["errors"][0]["valid_values"]
    assert len(rest(galaxy.galaxy_url, "/api/workflows", api_key)) == len(before)
    text = mcp.call_error("create_workflow", definition="steps: [unclosed", api_key=api_key)
    assert text.startswith("[VALIDATION_ERROR]")


def test_a_stored_workflow_missing_tool_defaults_is_refused_naming_the_step(galaxy, mcp, api_key, wf_history, table):
    """Posted without fill_defaults, Galaxy keeps the partial state and refuses to invoke it."""
    workflow = rest(galaxy.galaxy_url, "/api/workflows", api_key, {"workflow": FAILING_MIDDLE})["id"]
    before = len(invocations_of(galaxy, api_key, workflow))
    text = mcp.call_error("invoke_workflow", workflow_id=workflow, history_id=wf_history,
                          inputs={"table": {"src": "hda", "id": table}}, api_key=api_key)
    assert text.startswith("[VALIDATION_ERROR]") and "create_workflow" in text, text
    assert "step 'cut'" in text or "step 'sort'" in text, text
    assert len(invocations_of(galaxy, api_key, workflow)) == before


# ---- deleting and restoring ----


def listed_workflows(mcp, api_key, **filters) -> list[str]:
    return [listed["id"] for listed in mcp.call_ok("list_workflows", api_key=api_key, **filters)["workflows"]]


def test_delete_and_restore_a_workflow_and_its_invocations_stay(galaxy, mcp, api_key, wf_history, table):
    workflow = upload_workflow(galaxy, api_key, {**SORT_WORKFLOW, "label": "deleted and restored"})
    invoked = mcp.call_ok("invoke_workflow", workflow_id=workflow, history_id=wf_history,
                          inputs={"table": {"src": "hda", "id": table}}, api_key=api_key)
    deleted = mcp.call_ok("delete_workflow", workflow_id=workflow, api_key=api_key)
    assert (deleted["workflow_id"], deleted["name"], deleted["deleted"]) == (workflow, "deleted and restored", True)
    assert rest(galaxy.galaxy_url, f"/api/workflows/{workflow}", api_key)["deleted"] is True
    assert workflow not in listed_workflows(mcp, api_key)
    assert workflow in listed_workflows(mcp, api_key, search="is:deleted")  # where its Next points
    assert mcp.call_ok("delete_workflow", workflow_id=workflow, api_key=api_key)["deleted"] is True  # idempotent
    assert finished_invocation(mcp, api_key, invoked["id"])["progress"]["state"] == "ok"
    restored = mcp.call_ok("restore_workflow", workflow_id=workflow, api_key=api_key)
    assert restored["deleted"] is False and workflow in listed_workflows(mcp, api_key)
    assert [row["id"] for row in invocations_of(galaxy, api_key, workflow)] == [invoked["id"]]


def test_only_the_owner_deletes_or_restores_a_shared_or_published_workflow(galaxy, mcp, api_key, other_user_key):
    gx = galaxy.galaxy_url
    workflow = upload_workflow(galaxy, api_key, {**SORT_WORKFLOW, "label": "shared and published"})
    other_id = rest(gx, "/api/users/current", other_user_key)["id"]
    rest(gx, f"/api/workflows/{workflow}/share_with_users", api_key, {"user_ids": [other_id]}, method="PUT")
    rest(gx, f"/api/workflows/{workflow}/publish", api_key, method="PUT")
    assert mcp.call_ok("get_workflow_input_schema", workflow_id=workflow, api_key=other_user_key)["inputs"]
    for tool in ("delete_workflow", "restore_workflow"):
        error = mcp.call_error(tool, workflow_id=workflow, api_key=other_user_key)
        assert error.startswith(f"[AUTHORIZATION_ERROR] Workflow {workflow} belongs to another user"), error
    shown = rest(gx, f"/api/workflows/{workflow}", api_key)
    assert (shown["deleted"], shown["published"]) == (False, True), shown
    unknown = missing_id(galaxy)
    for tool in ("delete_workflow", "restore_workflow"):
        error = mcp.call_error(tool, workflow_id=unknown, api_key=api_key)
        assert error.startswith(f"[NOT_FOUND] No workflow with id {unknown}"), error
        error = mcp.call_error(tool, workflow_id="not-an-id!", api_key=api_key)
        assert error.startswith("[VALIDATION_ERROR] workflow_id"), error
