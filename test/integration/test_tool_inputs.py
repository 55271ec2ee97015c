"""Issue 15: tool inputs an agent gets right the first time, through /api/mcp on a real Galaxy.

get_tool_input_schema, run_tool's preflight and check_tool_inputs. The whole-toolbox
equivalence sweep is in test_tool_inputs_sweep.py.
"""

import json

import pytest

from conftest import wait_for_dataset
from galaxy_mcp_analysis.testing import rest
from test_making_inputs import (
    history_snapshot,
    wait_for_jobs_through_mcp,
)

TABLE = "b\t2\na\t10\nc\t1\n"


def jobs_of(galaxy, api_key, history_id):
    return sorted(job["id"] for job in rest(galaxy.galaxy_url, f"/api/jobs?history_id={history_id}&limit=500", api_key))


def paste(galaxy, mcp, api_key, history_id, content, file_type, name=None):
    created = mcp.call_ok("create_dataset_from_text", history_id=history_id, content=content, file_type=file_type,
                          name=name or file_type, api_key=api_key)
    wait_for_dataset(galaxy, api_key, created["dataset_id"])
    return created["dataset_id"]


@pytest.fixture(scope="module")
def inputs(galaxy, mcp, api_key):
    """A history with a table, a json and a fasta dataset and a list of three text datasets."""
    history_id = mcp.call_ok("create_history", name="tool inputs", api_key=api_key)["id"]
    table = paste(galaxy, mcp, api_key, history_id, TABLE, "tabular")
    other = {ext: paste(galaxy, mcp, api_key, history_id, text, ext)
             for ext, text in (("json", '{"a": 1}\n'), ("fasta", ">s\nACGT\n"))}
    texts = {f"e{i}": paste(galaxy, mcp, api_key, history_id, f"element {i}\n", "txt", f"e{i}") for i in range(3)}
    collection = mcp.call_ok("create_collection", history_id=history_id, collection_type="list", api_key=api_key,
                             element_identifiers=[{"name": n, "src": "hda", "id": i} for n, i in texts.items()])
    return {"history_id": history_id, "table": table, "collection": collection["collection_id"], **other}


def ref(dataset_id, src="hda"):
    return {"src": src, "id": dataset_id}


def read(mcp, api_key, dataset_id):
    return mcp.call_ok("peek_dataset_content", dataset_id=dataset_id, api_key=api_key)["content"]


def run_and_read(mcp, api_key, history_id, tool_id, tool_inputs):
    result = mcp.call_ok("run_tool", history_id=history_id, tool_id=tool_id, inputs=tool_inputs, api_key=api_key)
    assert result["inputs_checked"] is True
    states = wait_for_jobs_through_mcp(mcp, api_key, [job["id"] for job in result["jobs"]])
    assert set(states.values()) == {"ok"}
    return read(mcp, api_key, result["outputs"][0]["id"])


def test_sort1_schema_lists_every_option_and_is_small(mcp, api_key):
    answer = mcp.call_ok("get_tool_input_schema", tool_id="sort1", api_key=api_key)
    assert len(json.dumps(answer)) < 4000  # the whole answer, well under the 12 KB budget
    assert (answer["tool_id"], answer["modelled"]) == ("sort1", True)
    schema = answer["schema"]
    assert schema["$schema"].endswith("2020-12/schema") and schema["additionalProperties"] is False
    properties = schema["properties"]
    assert properties["order"]["enum"] == ["DESC", "ASC"] and properties["order"]["default"] == "DESC"
    assert properties["order"]["x-labels"]["ASC"].startswith("Ascending")
    assert properties["style"]["enum"] == ["num", "gennum", "alpha"]
    assert "tabular" in properties["input"]["description"] and properties["input"]["additionalProperties"] is False
    assert properties["column_set"]["type"] == "array"
    assert properties["column_set"]["items"]["additionalProperties"] is False
    assert schema["required"] == ["input"]
    assert answer["template"] == {"input": {"src": "hda", "id": "<dataset_id>"}, "column": None, "style": "num",
                                  "order": "DESC", "column_set": [], "header_lines": 0}
    (data_input,) = answer["data_inputs"]
    assert data_input["path"] == "input" and data_input["datatypes"] == ["tabular"]
    assert data_input["map_over"] == {"input": {"batch": True, "values": [{"src": "hdca", "id": "<collection_id>"}]}}


def test_a_conditional_is_one_branch_per_test_value(mcp, api_key):
    schema = mcp.call_ok("get_tool_input_schema", tool_id="__EXTRACT_DATASET__", api_key=api_key)["schema"]
    branches = schema["properties"]["which"]["oneOf"]
    assert [branch["properties"]["which_dataset"]["const"] for branch in branches] == [
        "first", "by_identifier", "by_index"]
    assert branches[2]["properties"]["index"]["type"] == "integer" and branches[2]["required"] == ["which_dataset"]
    assert all(branch["additionalProperties"] is False for branch in branches)
    assert "list" in schema["properties"]["input"]["description"]


def test_unknown_tools_and_versions_are_not_found(mcp, api_key):
    assert mcp.call_error("get_tool_input_schema", tool_id="sortt", api_key=api_key).startswith("[NOT_FOUND]")
    error = mcp.call_error("get_tool_input_schema", tool_id="__BUILD_LIST__", tool_version="9.9", api_key=api_key)
    assert error.startswith("[NOT_FOUND]") and "1.1.0" in error and "1.2.0" in error
    older = mcp.call_ok("get_tool_input_schema", tool_id="__BUILD_LIST__", tool_version="1.1.0", api_key=api_key)
    assert older["tool_version"] == "1.1.0" and "id_cond" not in json.dumps(older["schema"])


def test_the_silent_drop_is_refused_and_nothing_is_created(galaxy, mcp, api_key, inputs):
    history_id = inputs["history_id"]
    before = history_snapshot(galaxy, api_key, history_id), jobs_of(galaxy, api_key, history_id)
    error = mcp.call_error("run_tool", history_id=history_id, tool_id="sort1", api_key=api_key, inputs={
        "input": ref(inputs["table"]), "colum": "2", "order": "ASC", "stlye": "num"})
    assert error.startswith("[VALIDATION_ERROR] Tool 'sort1' (1.2.0) cannot run with these inputs: 2 problems")
    assert "- inputs.colum: Tool 'sort1' has no parameter 'colum'. Did you mean 'column'" in error
    assert "- inputs.stlye: Tool 'sort1' has no parameter 'stlye'. Did you mean 'style'?" in error
    assert "Nothing was queued or created." in error and "pydantic" not in error
    assert (history_snapshot(galaxy, api_key, history_id), jobs_of(galaxy, api_key, history_id)) == before


def test_the_corrected_call_runs_with_numbers_as_strings(mcp, api_key, inputs):
    # "2" for an integer column is what Galaxy's legacy API took; it still works, and is applied.
    output = run_and_read(mcp, api_key, inputs["history_id"], "sort1", {
        "input": ref(inputs["table"]), "column": "2", "order": "ASC", "style": "num"})
    assert output == "c\t1\nb\t2\na\t10\n"


def test_a_column_given_as_its_label_runs_as_galaxy_reads_it(mcp, api_key, inputs):
    """Galaxy's column parameter reads "c2" as column 2; the preflight accepts it and says what it sent."""
    given = {"input": ref(inputs["table"]), "column": "c2", "order": "ASC", "style": "num"}
    checked = mcp.call_ok("check_tool_inputs", history_id=inputs["history_id"], tool_id="sort1", inputs=given,
                          api_key=api_key)
    assert checked["valid"] is True and checked["resolved_inputs"]["column"] == 2, checked
    assert checked["normalised"] == [{"path": "inputs.column", "given": "c2", "sent": 2}]
    run = mcp.call_ok("run_tool", history_id=inputs["history_id"], tool_id="sort1", inputs=given, api_key=api_key)
    assert run["normalised"] == checked["normalised"]
    states = wait_for_jobs_through_mcp(mcp, api_key, [job["id"] for job in run["jobs"]])
    assert set(states.values()) == {"ok"}
    assert read(mcp, api_key, run["outputs"][0]["id"]) == "c\t1\nb\t2\na\t10\n"
    recorded = mcp.call_ok("get_job_parameters", job_id=run["jobs"][0]["id"], api_key=api_key)["inputs"]
    assert recorded["column"] == 2



def test_a_null_boolean_of_an_old_profile_tool_runs_with_its_default(mcp, api_key, inputs):
    """wc_gnu (profile before 24.2) has include_header checked by default: null means that default, said in
    `normalised`, nested and flat alike; Galaxy's legacy path would have read the null as false (no header)."""
    for label, given in (("nested", {"input1": ref(inputs["table"]), "options": ["lines"], "include_header": None}),
                         ("flat", {"input1": ref(inputs["table"]), "options": "lines", "include_header": None})):
        checked = mcp.call_ok("check_tool_inputs", history_id=inputs["history_id"], tool_id="wc_gnu", inputs=given,
                              api_key=api_key)
        assert checked["valid"] is True, (label, checked)
        assert checked["normalised"] == [{"path": "inputs.include_header", "given": None, "sent": True}], checked
    run = mcp.call_ok("run_tool", history_id=inputs["history_id"], tool_id="wc_gnu", inputs=given, api_key=api_key)
    assert run["normalised"] == checked["normalised"]
    states = wait_for_jobs_through_mcp(mcp, api_key, [job["id"] for job in run["jobs"]])
    assert set(states.values()) == {"ok"}
    assert read(mcp, api_key, run["outputs"][0]["id"]).startswith("#"), "no header line: the null was read as false"
    recorded = mcp.call_ok("get_job_parameters", job_id=run["jobs"][0]["id"], api_key=api_key)["inputs"]
    assert recorded["include_header"] is True

def test_the_flat_form_of_a_conditional_is_applied(mcp, api_key, inputs):
    collection = ref(inputs["collection"], "hdca")
    flat = run_and_read(mcp, api_key, inputs["history_id"], "__EXTRACT_DATASET__", {
        "input": collection, "which|which_dataset": "by_index", "which|index": "1"})
    assert flat == "element 1\n"
    nested = run_and_read(mcp, api_key, inputs["history_id"], "__EXTRACT_DATASET__", {
        "input": collection, "which": {"which_dataset": "by_identifier", "identifier": "e2"}})
    assert nested == "element 2\n"  # the legacy API ignored nested conditionals; now they are sent flat


def test_every_problem_is_reported_at_once_with_its_path(galaxy, mcp, api_key, inputs):
    history_id = inputs["history_id"]
    before = jobs_of(galaxy, api_key, history_id)
    error = mcp.call_error("run_tool", history_id=history_id, tool_id="__EXTRACT_DATASET__", api_key=api_key,
                           inputs={"input": ref(inputs["collection"], "hdca"), "which": {"index": 1}})
    assert "inputs.which.index: 'index' belongs to the branch which_dataset='by_index'" in error
    assert "(unselected_branch)" in error
    error = mcp.call_error("run_tool", history_id=history_id, tool_id="sort1", api_key=api_key, inputs={
        "input": ref(inputs["json"]), "order": "up", "header_lines": "many", "column_set_0|other_colum": 1})
    for expected in ("inputs.input: 'input' accepts datasets of type 'tabular'", "(datatype_not_accepted)",
                     "inputs.order: 'up' is not an option of 'order'; valid values: 'DESC', 'ASC'",
                     "inputs.header_lines: 'header_lines' takes an integer, not 'many'",
                     "inputs.column_set[0].other_colum: block 0 of repeat 'column_set' has no parameter"):
        assert expected in error
    error = mcp.call_error("run_tool", history_id=history_id, tool_id="__UNZIP_COLLECTION__", api_key=api_key,
                           inputs={"input": ref(inputs["collection"], "hdca")})
    assert "inputs.input: 'input' takes collections of type 'paired'; this collection is 'list'" in error
    assert jobs_of(galaxy, api_key, history_id) == before


def test_a_dataset_galaxy_converts_implicitly_is_accepted_and_runs_converted(galaxy, mcp, api_key, inputs):
    check = mcp.call_ok("check_tool_inputs", history_id=inputs["history_id"], tool_id="sort1", api_key=api_key,
                        inputs={"input": ref(inputs["fasta"])})
    assert check["valid"] is True, check["errors"]  # Galaxy converts fasta to tabular itself
    result = mcp.call_ok("run_tool", history_id=inputs["history_id"], tool_id="sort1", api_key=api_key,
                         inputs={"input": ref(inputs["fasta"]), "column": "1", "style": "alpha"})
    [job] = result["jobs"]
    assert wait_for_jobs_through_mcp(mcp, api_key, [job["id"]]) == {job["id"]: "ok"}
    # The sort job read Galaxy's tabular conversion of the fasta (">s / ACGT" became one row), not the fasta.
    [given] = rest(galaxy.galaxy_url, f"/api/jobs/{job['id']}", api_key)["inputs"].values()
    assert given["id"] != inputs["fasta"], given
    converted = rest(galaxy.galaxy_url, f"/api/datasets/{given['id']}", api_key)
    assert converted["extension"] == "tabular", converted["extension"]
    assert read(mcp, api_key, result["outputs"][0]["id"]) == "s\tACGT\n"


def test_check_tool_inputs_is_a_dry_run_with_what_galaxy_would_run(galaxy, mcp, api_key, inputs):
    history_id = inputs["history_id"]
    before = history_snapshot(galaxy, api_key, history_id), jobs_of(galaxy, api_key, history_id)
    check = mcp.call_ok("check_tool_inputs", history_id=history_id, tool_id="sort1", api_key=api_key,
                        inputs={"input": ref(inputs["table"]), "column": "2"})
    assert (check["valid"], check["errors"], check["jobs_expected"], check["map_over"]) == (True, [], 1, [])
    assert check["resolved_inputs"] == {"input": ref(inputs["table"]), "column": 2, "style": "num", "order": "DESC",
                                        "column_set": [], "header_lines": 0}
    invalid = mcp.call_ok("check_tool_inputs", history_id=history_id, tool_id="sort1", api_key=api_key,
                          inputs={"input": ref(inputs["table"]), "colum": 2})
    assert invalid["valid"] is False and invalid["resolved_inputs"] is None
    (problem,) = invalid["errors"]
    assert (problem["path"], problem["rule"]) == ("inputs.colum", "unknown_parameter")
    assert "column" in problem["valid_values"] and problem["suggestion"].startswith("Rename it to 'column'.")
    mapped = mcp.call_ok("check_tool_inputs", history_id=history_id, tool_id="cat1", api_key=api_key,
                         inputs={"input1": ref(inputs["collection"], "hdca")})
    assert mapped["valid"] is True and mapped["jobs_expected"] == 3
    assert mapped["mapped_over"] == [{"input": "input1", "collection_id": inputs["collection"], "wrapped": True}]
    assert mapped["map_over"] == [{"input": "inputs.input1", "collection_id": inputs["collection"],
                                   "collection_type": "list", "jobs": 3}]
    assert (history_snapshot(galaxy, api_key, history_id), jobs_of(galaxy, api_key, history_id)) == before


def test_a_column_the_dataset_lacks_is_refused_by_the_check_as_by_the_run(galaxy, mcp, api_key, inputs):
    """The typed model judges a column number by the tool alone (any integer); Galaxy judges it against the
    dataset's columns when it populates the request. The dry run asks Galaxy too, so check and run agree."""
    history_id, table = inputs["history_id"], inputs["table"]  # TABLE has 2 columns
    tables = mcp.call_ok("create_collection", history_id=history_id, collection_type="list", api_key=api_key,
                         element_identifiers=[{"name": n, "src": "hda", "id": table} for n in ("t1", "t2")], name="tables")
    before = history_snapshot(galaxy, api_key, history_id), jobs_of(galaxy, api_key, history_id)
    for column in ("3", 9):
        check = mcp.call_ok("check_tool_inputs", history_id=history_id, tool_id="sort1", api_key=api_key,
                            inputs={"input": ref(table), "column": column})
        assert (check["valid"], check["resolved_inputs"], check["jobs_expected"]) == (False, None, 0), check
        (problem,) = check["errors"]
        assert (problem["path"], problem["rule"]) == ("inputs.column", "invalid_value"), problem
        assert f"({str(column)!r})" in problem["message"] and "valid options" in problem["message"], problem
        assert "given as 'input' has 2 columns" in problem["message"] and "from 1 to 2" in problem["suggestion"]
        error = mcp.call_error("run_tool", history_id=history_id, tool_id="sort1", api_key=api_key,
                               inputs={"input": ref(table), "column": column})
        assert error.startswith("[VALIDATION_ERROR]") and "- inputs.column: " in error, error  # run_tool: the same
        assert "has 2 columns" in error and "(invalid_value)" in error and "inputSchema" not in error, error
        assert "Suggestion: " in error and "check_tool_inputs" in error.split("Suggestion: ")[1], error
    for column, valid in ((2, True), (5, False)):  # mapped over a collection: one refusal, not one per job
        mapped = mcp.call_ok("check_tool_inputs", history_id=history_id, tool_id="sort1", api_key=api_key,
                             inputs={"input": ref(tables["collection_id"], "hdca"), "column": column})
        assert mapped["valid"] is valid and len(mapped["errors"]) == (0 if valid else 1), mapped
    assert (history_snapshot(galaxy, api_key, history_id), jobs_of(galaxy, api_key, history_id)) == before


def test_another_users_items_are_refused_by_the_check(mcp, api_key, other_user_key, inputs):
    error = mcp.call_error("check_tool_inputs", history_id=inputs["history_id"], tool_id="sort1",
                           inputs={"input": ref(inputs["table"])}, api_key=other_user_key)
    assert error.startswith("[AUTHORIZATION_ERROR]")
