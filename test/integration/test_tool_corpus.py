"""Tool wrappers of the kinds admins install, served the way `make serve TOOL_CONF=...` serves an
admin's own tools (test/corpus): valid requests run as asked, in the flat and the nested form;
a value the preflight cannot judge is passed on and named in ``unchecked``, never refused on a guess.

The session's Galaxy serves the corpus (conftest.CORPUS_CONF) beside the bundled toolbox; the
preflight sweep picks its tools from the bundled toolbox alone, so its figures stay as they are."""

import pytest

from conftest import fetch
from galaxy_mcp_analysis.testing import rest
from suggested_calls import calls_in


@pytest.fixture(scope="module")
def corpus(galaxy, mcp, api_key):
    history = mcp.call_ok("create_history", name="corpus", api_key=api_key)["id"]
    table = fetch(galaxy, api_key, history, {"src": "pasted", "paste_content": "a\t1\nb\t2\n", "ext": "tabular",
                                             "dbkey": "hg19"})
    notes = fetch(galaxy, api_key, history, {"src": "pasted", "paste_content": "notes\n", "ext": "txt"})
    return {"mcp": mcp, "key": api_key, "history": history, "table": table["id"], "notes": notes["id"], "galaxy": galaxy}


def run(corpus, tool_id, inputs) -> tuple[dict, str, dict]:
    """(run_tool's result, the output's text, the job's recorded inputs), the job finished ok."""
    mcp, key = corpus["mcp"], corpus["key"]
    checked = mcp.call_ok("check_tool_inputs", history_id=corpus["history"], tool_id=tool_id, inputs=inputs,
                          api_key=key)
    assert checked["valid"] is True, checked
    result = mcp.call_ok("run_tool", history_id=corpus["history"], tool_id=tool_id, inputs=inputs, api_key=key)
    [job] = result["jobs"]
    waited = mcp.call_ok("wait_for_jobs", job_ids=[job["id"]], timeout_seconds=120, api_key=key)
    assert waited["jobs"][0]["state"] == "ok", waited
    text = mcp.call_ok("peek_dataset_content", dataset_id=result["outputs"][0]["id"], api_key=key)["content"]
    recorded = mcp.call_ok("get_job_parameters", job_id=job["id"], api_key=key)["inputs"]
    return result, text, recorded


def test_the_corpus_is_served_beside_the_bundled_toolbox(corpus):
    found = corpus["mcp"].call_ok("search_tools", query="Corpus", api_key=corpus["key"])
    assert {"corpus_branches", "corpus_metadata_options", "corpus_formats"} <= {tool["id"] for tool in found["tools"]}
    assert corpus["mcp"].call_ok("get_tool_details", tool_id="sort1", api_key=corpus["key"])["id"] == "sort1"


@pytest.mark.parametrize("form", ["flat", "nested"])
def test_a_name_sibling_branches_type_differently_runs_as_sent(corpus, form):
    """Branch b's size is an integer where branch a's is a select; the inner conditional of branch two
    has a float n where branch one's is an integer. Before: "'size' takes an integer, not '800'"."""
    flat = {"cond|mode": "b", "cond|size": "800", "cond|extra": "7", "outer|kind": "two", "outer|inner|pick": "p",
            "outer|inner|n": "0.25"}
    nested = {"cond": {"mode": "b", "size": 800, "extra": 7},
              "outer": {"kind": "two", "inner": {"pick": "p", "n": 0.25}}}
    result, text, recorded = run(corpus, "corpus_branches", flat if form == "flat" else nested)
    assert result["unchecked"] == []
    assert text == "mode=b size=800 extra=7\nkind=two pick=p\nn=0.25\n"
    assert recorded == nested


def test_options_from_the_inputs_metadata_are_the_datasets(corpus):
    """The build select lists the table's own genome build (data_meta dbkey); Galaxy computes it
    with the request's dataset. Before: every value was refused ("valid values: .")."""
    mcp, key = corpus["mcp"], corpus["key"]
    inputs = {"input": {"src": "hda", "id": corpus["table"]}, "build": "hg19"}
    result, text, recorded = run(corpus, "corpus_metadata_options", inputs)
    assert text == "build=hg19\n" and recorded["build"] == "hg19" and result["unchecked"] == []
    refused = mcp.call_ok("check_tool_inputs", history_id=corpus["history"], tool_id="corpus_metadata_options",
                          api_key=key, inputs={**inputs, "build": "mm10"})
    [problem] = refused["errors"]
    assert (problem["path"], problem["rule"], problem["valid_values"]) == ("inputs.build", "not_an_option", ["hg19"])
    error = mcp.call_error("run_tool", history_id=corpus["history"], tool_id="corpus_metadata_options",
                           api_key=key, inputs={**inputs, "build": "mm10"})
    assert "inputs.build" in error and "'hg19'" in error and "Nothing was queued" in error, error


def test_options_that_cannot_be_computed_are_left_to_galaxy_and_named(corpus):
    """The schema cannot list values that only a dataset knows: it lists none, and a request whose
    select cannot be judged says so in unchecked instead of being refused."""
    mcp, key = corpus["mcp"], corpus["key"]
    schema = mcp.call_ok("get_tool_input_schema", tool_id="corpus_metadata_options", api_key=key)["schema"]
    assert "enum" not in schema["properties"]["build"], schema["properties"]["build"]
    checked = mcp.call_ok("check_tool_inputs", history_id=corpus["history"], tool_id="corpus_metadata_options",
                          inputs={"build": "hg19"}, api_key=key)
    assert [entry["path"] for entry in checked["unchecked"]] == ["inputs.build"], checked
    assert "input" in checked["unchecked"][0]["reason"]
    assert [error["path"] for error in checked["errors"]] == ["inputs.input"]  # the missing dataset, only


def test_formats_this_galaxy_lacks_are_left_out_as_galaxy_does_and_a_column_label_is_read(corpus):
    """first takes tabular (its other format is unknown here); second names only an unknown datatype, so
    Galaxy takes any dataset; key is given as Galaxy's column label c2."""
    inputs = {"first": {"src": "hda", "id": corpus["table"]}, "second": {"src": "hda", "id": corpus["notes"]},
              "key": "c2"}
    result, text, recorded = run(corpus, "corpus_formats", inputs)
    assert text == "a\t1\nb\t2\nnotes\n"
    assert result["normalised"] == [{"path": "inputs.key", "given": "c2", "sent": 2}] and recorded["key"] == 2


def test_a_validator_the_typed_model_lacks_is_judged_by_galaxy_before_anything_runs(corpus):
    """Galaxy's typed model carries no expression validator; Galaxy applies it when it populates the request.
    check_tool_inputs asks Galaxy, and run_tool queues nothing."""
    mcp, key = corpus["mcp"], corpus["key"]
    inputs = {"accession": "SRR1", "name": "odd", "even": 3}
    jobs = len(rest(corpus["galaxy"].galaxy_url, f"/api/jobs?history_id={corpus['history']}&limit=1000", key))
    checked = mcp.call_ok("check_tool_inputs", history_id=corpus["history"], tool_id="corpus_validators",
                          inputs=inputs, api_key=key)
    assert [(error["path"], error["rule"]) for error in checked["errors"]] == [("inputs.even", "invalid_value")]
    assert "Must be even" in checked["errors"][0]["message"], checked
    error = mcp.call_error("run_tool", history_id=corpus["history"], tool_id="corpus_validators", inputs=inputs,
                           api_key=key)
    assert error.startswith("[VALIDATION_ERROR]") and "inputs.even" in error and "Must be even" in error, error
    assert len(rest(corpus["galaxy"].galaxy_url, f"/api/jobs?history_id={corpus['history']}&limit=1000", key)) == jobs
    _, text, _ = run(corpus, "corpus_validators", {**inputs, "even": 4})
    assert "even=4 name=odd" in text


def test_a_test_value_without_a_branch_runs_with_no_inner_parameters(corpus):
    """Galaxy adds an empty branch for each test value that has no <when> (trimming 'auto', stats false);
    the preflight models those branches instead of refusing the values, and still refuses a foreign one."""
    mcp, key = corpus["mcp"], corpus["key"]
    inputs = {"stats": {"report": False}, "trimming": {"how": "auto"}, "level": "2"}
    result, text, recorded = run(corpus, "corpus_branch_values", inputs)
    assert "stats=false\ntrim=auto\n" in text and recorded["trimming"] == {"how": "auto"}
    schema = mcp.call_ok("get_tool_input_schema", tool_id="corpus_branch_values", api_key=key)["schema"]
    assert {branch["properties"]["how"].get("const") for branch in schema["properties"]["trimming"]["oneOf"]} >= {
        "none", "auto", "fixed"}, schema["properties"]["trimming"]
    refused = mcp.call_ok("check_tool_inputs", history_id=corpus["history"], tool_id="corpus_branch_values",
                          inputs={**inputs, "trimming": {"how": "manual"}}, api_key=key)
    assert [error["path"] for error in refused["errors"]] == ["inputs.trimming.how"], refused


@pytest.mark.parametrize("form", ["nested", "flat"])
def test_a_value_the_typed_model_refuses_runs_when_galaxy_runs_it_as_sent(corpus, form):
    """Issue 41, item 4: Galaxy's own request handling is the judge where its typed model refuses a value.
    "no" / "off" for a boolean (a repeat, a conditional and a section deep) is false to Galaxy, as sent: it runs,
    named in `decided_by_galaxy`, and the job records false (the default is true). What Galaxy would read as
    something else stays refused, with nothing created: "nope" (false to Galaxy, but not what was written),
    2.5 for an integer (Galaxy's int() makes it 2), "4.0" (Galaxy refuses it too)."""
    mcp, key, history = corpus["mcp"], corpus["key"], corpus["history"]
    path = "inputs.queries[0].how.window.strict"

    def request(strict, size=4):
        if form == "nested":
            return {"queries": [{"term": "t", "how": {"mode": "window", "window": {"size": size, "strict": strict}}}]}
        return {"queries_0|term": "t", "queries_0|how|mode": "window", "queries_0|how|window|size": size,
                "queries_0|how|window|strict": strict}

    given = "no" if form == "nested" else "off"
    result, text, recorded = run(corpus, "corpus_groups", request(given))
    assert result["decided_by_galaxy"] == [
        {"path": path, "model_rule": "wrong_type", "sent": given, "galaxy_reads": False}], result["decided_by_galaxy"]
    assert "window=4 strict=false" in text, text
    assert recorded["queries"][0]["how"]["window"]["strict"] is False, recorded
    jobs_before = rest(corpus["galaxy"].galaxy_url, f"/api/jobs?history_id={history}&limit=500", key)
    for sent, wrong in ((request("nope"), path), (request(True, 2.5), path.replace("strict", "size")),
                        (request(True, "4.0"), path.replace("strict", "size"))):
        checked = mcp.call_ok("check_tool_inputs", history_id=history, tool_id="corpus_groups", inputs=sent,
                              api_key=key)
        assert checked["valid"] is False and checked["decided_by_galaxy"] == [], checked
        assert [(error["path"], error["rule"]) for error in checked["errors"]] == [(wrong, "wrong_type")], checked
        error = mcp.call_error("run_tool", history_id=history, tool_id="corpus_groups", inputs=sent, api_key=key)
        assert error.startswith("[VALIDATION_ERROR]") and wrong in error, error
    assert rest(corpus["galaxy"].galaxy_url, f"/api/jobs?history_id={history}&limit=500", key) == jobs_before


def test_a_value_galaxys_population_lets_through_unchecked_stays_refused(corpus):
    """Galaxy's legacy population keeps any text for a colour ("zz_not_a_colour" would reach the command line),
    but its typed model refuses it: Galaxy's reading must itself be a value the model takes, so it stays refused."""
    mcp, key = corpus["mcp"], corpus["key"]
    checked = mcp.call_ok("check_tool_inputs", history_id=corpus["history"], tool_id="corpus_scalars",
                          inputs={"colour": "zz_not_a_colour"}, api_key=key)
    assert checked["valid"] is False and checked["decided_by_galaxy"] == [], checked
    assert [error["path"] for error in checked["errors"]] == ["inputs.colour"], checked


@pytest.mark.parametrize("form", ["flat", "nested"])
def test_a_dataset_of_a_type_a_branch_does_not_take_is_refused_before_any_job(corpus, form):
    """A genome choice shaped like interval tools' (one name: a data-table select in one branch, a
    chromosome-lengths data input in the other): the dataset given to the data input is judged by the datatype
    rule as anywhere else. Before: "unchecked: Galaxy could not list its options here", nothing judged.

    A BED is no `len` and Galaxy has no converter to it: refused before any job. A FASTA is checked too, and
    accepted: Galaxy converts it to `len` itself (its fasta_to_len converter), so refusing it would refuse what
    Galaxy runs as asked."""
    mcp, key, history = corpus["mcp"], corpus["key"], corpus["history"]
    fasta = fetch(corpus["galaxy"], key, history, {"src": "pasted", "paste_content": ">s1\nACGT\n", "ext": "fasta"})
    bed = fetch(corpus["galaxy"], key, history, {"src": "pasted", "paste_content": "chr1\t10\t20\n", "ext": "bed"})
    intervals = {"src": "hda", "id": bed["id"]}

    def request(genome):
        given = {"src": "hda", "id": genome}
        return ({"intervals": intervals, "reference|source": "history", "reference|genome": given} if form == "flat"
                else {"intervals": intervals, "reference": {"source": "history", "genome": given}})

    jobs_before = rest(corpus["galaxy"].galaxy_url, f"/api/jobs?history_id={history}", key)
    checked = mcp.call_ok("check_tool_inputs", history_id=history, tool_id="corpus_genome_choice",
                          inputs=request(bed["id"]), api_key=key)
    assert checked["valid"] is False, checked
    [problem] = checked["errors"]
    assert (problem["path"], problem["rule"]) == ("inputs.reference.genome", "datatype_not_accepted"), problem
    assert "'bed'" in problem["message"] and problem["valid_values"] == ["len"], problem
    assert checked["unchecked"] == [], checked["unchecked"]
    error = mcp.call_error("run_tool", history_id=history, tool_id="corpus_genome_choice", inputs=request(bed["id"]),
                           api_key=key)
    assert "inputs.reference.genome" in error and "Nothing was queued" in error, error
    assert rest(corpus["galaxy"].galaxy_url, f"/api/jobs?history_id={history}", key) == jobs_before
    converted = mcp.call_ok("check_tool_inputs", history_id=history, tool_id="corpus_genome_choice",
                            inputs=request(fasta["id"]), api_key=key)
    assert converted["valid"] is True and converted["unchecked"] == [], converted


#: Calls a refusal's fix may name (the test makes each one it finds).
FIX_CALLS = {"check_tool_inputs", "get_dataset_details", "get_history_contents", "update_dataset",
             "get_tool_input_schema", "run_tool"}


def test_each_fix_a_refusal_names_is_a_call_that_works(corpus):
    """A corpus of refusals, each fix's calls made with the values the agent would choose (as the debugging
    signals' repairs are, test_debugging_signals): a data table's refusal never sends the agent to a
    dataset's columns, an unknown dataset in run_tool never to create_collection."""
    mcp, key, history = corpus["mcp"], corpus["key"], corpus["history"]
    png = fetch(corpus["galaxy"], key, history, {"src": "pasted", "paste_content": "x\n", "ext": "png"})["id"]
    table = {"src": "hda", "id": corpus["table"]}
    refusals = {  # what: (tool id, inputs, run_tool or check_tool_inputs)
        "unknown dataset": ("corpus_columns", {"table": {"src": "hda", "id": "0123456789abcdef"}, "key": 1,
                                               "keep": [1], "value": 2}, "run_tool"),
        "column the data lacks": ("corpus_columns", {"table": table, "key": 9, "keep": [1], "value": 2},
                                  "check_tool_inputs"),
        "data table value": ("corpus_dynamic_options", {"genome": "zz", "names": table, "samples": ["a"]},
                             "check_tool_inputs"),
        "datatype": ("corpus_columns", {"table": {"src": "hda", "id": png}, "key": 1, "keep": [1], "value": 2},
                     "check_tool_inputs"),
    }
    chosen = {"history_id": history, "dataset_id": corpus["table"], "file_type": "tabular"}
    made = set()
    for what, (tool_id, inputs, call) in refusals.items():
        result = mcp.call(call, {"history_id": history, "tool_id": tool_id, "inputs": inputs, "api_key": key})
        if call == "run_tool":
            assert result.is_error, what
            fixes = [result.content[0].text]
        else:
            errors = result.structured_content["errors"]
            assert errors, (what, result.structured_content)
            fixes = [problem["suggestion"] for problem in errors]
        for fix in fixes:
            assert "create_collection" not in fix and ("columns" not in fix or what == "column the data lacks"), (
                what, fix)
            for suggested in calls_in(fix, FIX_CALLS):
                arguments = suggested.fill(**chosen, tool_id=tool_id, inputs=inputs)
                answer = mcp.call(suggested.tool, {**arguments, "api_key": key})
                assert not answer.is_error, (what, suggested.text, answer.content[0].text)
                made.add((what, suggested.tool))
    assert {("unknown dataset", "get_history_contents"), ("column the data lacks", "get_dataset_details"),
            ("column the data lacks", "check_tool_inputs"), ("datatype", "update_dataset")} <= made, made


def test_a_flat_request_is_read_as_galaxy_reads_it_and_what_galaxy_leaves_is_named(corpus):
    """Galaxy's reading of the flat form takes the selected branch only: a value of the other branch (the tests
    of published tools send them) runs as Galaxy runs it, named in ignored; a name the tool has nowhere is
    still refused. Before: 'n' belongs to the branch pick='p' (unselected_branch)."""
    mcp, key = corpus["mcp"], corpus["key"]
    flat = {"cond|mode": "b", "cond|size": "800", "cond|extra": "7", "outer|kind": "two", "outer|inner|pick": "r",
            "outer|inner|n": "0.25"}
    result, text, recorded = run(corpus, "corpus_branches", flat)
    assert result["ignored"] == [{"path": "inputs.outer.inner.n", "given": "0.25", "reason": (
        "the request selects 'r' for inner|pick, whose branch has no 'n'; Galaxy reads only the selected branch")}]
    assert text == "mode=b size=800 extra=7\nkind=two pick=r\n" and "n" not in recorded["outer"]["inner"]
    refused = mcp.call_ok("check_tool_inputs", history_id=corpus["history"], tool_id="corpus_branches",
                          inputs={**flat, "outer|inner|nn": "1"}, api_key=key)
    assert [(p["path"], p["rule"]) for p in refused["errors"]] == [("inputs.outer.inner.nn", "unknown_parameter")]
    nested = mcp.call_ok("check_tool_inputs", history_id=corpus["history"], tool_id="corpus_branches", api_key=key,
                         inputs={"cond": {"mode": "b"}, "outer": {"kind": "two", "inner": {"pick": "r", "n": 0.25}}})
    assert nested["ignored"] == [] and [p["rule"] for p in nested["errors"]] == ["unselected_branch"]
