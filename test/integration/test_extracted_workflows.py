"""A workflow saved from a history is ready to reuse, through /api/mcp on a real Galaxy: every step
labelled, its results marked as labelled workflow outputs that an invocation reports, and its schema
showing the values the saved steps run with, never a tool default they override."""

import urllib.request

import pytest

from galaxy_mcp_analysis.testing import rest

TABLES = {
    "isolate1": "geneA\t30\nother\t5\ngeneB\t10\ngeneC\t20\n",
    "isolate2": "geneX\t2\ngeneY\t9\nnoise\t1\ngeneZ\t4\n",
}


def run_and_wait(mcp, api_key, history_id, tool_id, inputs) -> dict:
    result = mcp.call_ok("run_tool", history_id=history_id, tool_id=tool_id, inputs=inputs, api_key=api_key)
    waited = mcp.call_ok("wait_for_jobs", job_ids=[job["id"] for job in result["jobs"]], timeout_seconds=120,
                         api_key=api_key)
    assert waited["jobs"] and all(job["state"] == "ok" for job in waited["jobs"]), waited
    [collection] = result["implicit_collections"]
    return collection


def collection_of(mcp, api_key, history_id, tables: dict[str, str], name: str) -> str:
    elements = []
    for element, text in tables.items():
        made = mcp.call_ok("create_dataset_from_text", history_id=history_id, content=text, file_type="tabular",
                           name=element, api_key=api_key)
        elements.append({"name": element, "src": "hda", "id": made["dataset_id"]})
    mcp.call_ok("wait_for_jobs", history_id=history_id, timeout_seconds=120, api_key=api_key)
    return mcp.call_ok("create_collection", history_id=history_id, collection_type="list", name=name,
                       element_identifiers=elements, copy_elements=False, api_key=api_key)["collection_id"]


def element_text(galaxy, api_key, collection_id) -> dict[str, str]:
    details = rest(galaxy.galaxy_url, f"/api/dataset_collections/{collection_id}?instance_type=history", api_key)
    texts = {}
    for element in details["elements"]:
        request = urllib.request.Request(
            f"{galaxy.galaxy_url}/api/datasets/{element['object']['id']}/display?preview=false",
            headers={"x-api-key": api_key},
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            texts[element["element_identifier"]] = response.read().decode()
    return texts


@pytest.fixture(scope="module")
def saved(galaxy, mcp, api_key):
    """isolates -> Grep1 'gene' -> sort1 on column 2 ascending -> first 2 lines, saved as a workflow."""
    history = mcp.call_ok("create_history", name="extracted workflows", api_key=api_key)["id"]
    isolates = collection_of(mcp, api_key, history, TABLES, "isolates")
    genes = run_and_wait(mcp, api_key, history, "Grep1", {
        "input": {"src": "hdca", "id": isolates}, "invert": "", "pattern": "gene"})
    ordered = run_and_wait(mcp, api_key, history, "sort1", {
        "input": {"src": "hdca", "id": genes["id"]}, "column": 2, "style": "num", "order": "ASC"})
    top = run_and_wait(mcp, api_key, history, "Show beginning1", {
        "input": {"src": "hdca", "id": ordered["id"]}, "lineNum": 2})
    workflow = mcp.call_ok("create_workflow_from_history", history_id=history, name="top genes", api_key=api_key)
    return {"history": history, "workflow": workflow, "by_hand": element_text(galaxy, api_key, top["id"]),
            "isolates": isolates}


def test_the_input_takes_the_label_chosen_and_an_unknown_id_is_refused_naming_the_inputs(mcp, api_key, saved):
    # Galaxy names the input after this run's collection; a workflow reused on other samples wants its own.
    relabelled = mcp.call_ok("create_workflow_from_history", history_id=saved["history"], name="top genes again",
                             input_labels={saved["isolates"]: "samples"}, api_key=api_key)
    assert [entry["label"] for entry in relabelled["inputs"]] == ["samples"], relabelled["inputs"]
    before = {workflow["id"] for workflow in mcp.call_ok("list_workflows", api_key=api_key)["workflows"]}
    refused = mcp.call("create_workflow_from_history", {"history_id": saved["history"], "name": "nope",
                                                        "input_labels": {"0123456789abcdef": "x"}, "api_key": api_key})
    text = refused.content[0].text
    assert refused.is_error and text.startswith("[VALIDATION_ERROR]") and saved["isolates"] in text, text
    assert {workflow["id"] for workflow in mcp.call_ok("list_workflows", api_key=api_key)["workflows"]} == before  # nothing made


def test_every_step_is_labelled_and_the_results_are_labelled_workflow_outputs(mcp, api_key, saved):
    workflow = saved["workflow"]
    steps = [step for step in workflow["steps"] if step["type"] == "tool"]
    assert [step["tool_id"] for step in steps] == ["Grep1", "sort1", "Show beginning1"], steps
    labels = [step["label"] for step in workflow["steps"]]
    assert all(labels) and len(set(labels)) == len(labels), labels
    assert [step["label"] for step in steps] == ["Select", "Sort", "Select first"], steps
    # The Format 2 definition carries the labels and the one result no step reads.
    definition = workflow["definition"]
    assert set(definition["steps"]) >= {"Select", "Sort", "Select first"}, definition["steps"]
    outputs = definition["outputs"]
    assert [output["outputSource"] for output in outputs.values()] == ["Select first/out_file1"], outputs
    assert list(outputs) == ["Select first"], outputs


def test_an_invocation_reports_the_labelled_outputs(galaxy, mcp, api_key, saved):
    history = saved["history"]
    fifth = collection_of(mcp, api_key, history, TABLES, "same isolates again")
    invoked = mcp.call_ok("invoke_workflow", workflow_id=saved["workflow"]["workflow_id"], history_id=history,
                          inputs={"isolates": {"src": "hdca", "id": fifth}}, api_key=api_key)
    waited = mcp.call_ok("wait_for_jobs", invocation_id=invoked["id"], timeout_seconds=120, api_key=api_key)
    assert waited["all_terminal"] and waited["invocation_scheduled"], waited
    details = mcp.call_ok("get_invocation_details", invocation_id=invoked["id"], api_key=api_key)
    assert details["progress"]["state"] == "ok", details["progress"]
    reported = details["invocation"]["output_collections"]
    assert list(reported) == ["Select first"], details
    assert element_text(galaxy, api_key, reported["Select first"]["id"]) == saved["by_hand"]
    assert saved["by_hand"] == {"isolate1": "geneB\t10\ngeneC\t20\n", "isolate2": "geneX\t2\ngeneZ\t4\n"}


def test_the_schema_shows_the_saved_values_not_the_tools_defaults(mcp, api_key, saved):
    schema = mcp.call_ok("get_workflow_input_schema", workflow_id=saved["workflow"]["workflow_id"], api_key=api_key)
    steps = {step["tool_id"]: step for step in schema["parameters"]}
    grep = steps["Grep1"]
    assert grep["label"] == "Select"
    # Grep1's own default is ^chr([0-9A-Za-z])+; the saved step runs with 'gene'.
    assert grep["schema"]["properties"]["pattern"]["default"] == "gene", grep["schema"]["properties"]["pattern"]
    assert {"path": "pattern", "label": "the pattern", "value": "gene"} in grep["saved"], grep["saved"]
    sort = steps["sort1"]["schema"]["properties"]
    assert (sort["column"]["default"], sort["order"]["default"]) == (2, "ASC"), sort
    head = steps["Show beginning1"]
    assert head["schema"]["properties"]["lineNum"]["default"] == 2
    assert not any(entry["path"] == "input" for entry in head["saved"]), head["saved"]

    checked = mcp.call_ok("check_workflow_inputs", workflow_id=saved["workflow"]["workflow_id"],
                          history_id=saved["history"], inputs={"isolates": {"src": "hdca", "id": "x"}},
                          api_key=api_key)
    saved_by_step = {step["tool_id"]: step["saved"] for step in checked["steps"]}
    [line_count] = [entry for entry in saved_by_step["Show beginning1"] if entry["path"] == "lineNum"]
    assert line_count["value"] == "2", saved_by_step


def test_step_parameters_can_be_set_by_the_new_labels(galaxy, mcp, api_key, saved):
    history = saved["history"]
    again = collection_of(mcp, api_key, history, {"isolate1": TABLES["isolate1"]}, "one isolate")
    invoked = mcp.call_ok("invoke_workflow", workflow_id=saved["workflow"]["workflow_id"], history_id=history,
                          inputs={"isolates": {"src": "hdca", "id": again}},
                          parameters={"Select first": {"lineNum": 1}}, api_key=api_key)
    mcp.call_ok("wait_for_jobs", invocation_id=invoked["id"], timeout_seconds=120, api_key=api_key)
    details = mcp.call_ok("get_invocation_details", invocation_id=invoked["id"], api_key=api_key)
    assert element_text(galaxy, api_key, details["invocation"]["output_collections"]["Select first"]["id"]) == {
        "isolate1": "geneB\t10\n"
    }
