"""core.tool_inputs and core.tool_input_problems: flat and nested forms, value normalisation, Galaxy's validation
errors in an agent's words.

The parameter objects are Galaxy's own (``input_models_for_tool_source`` on a small tool XML);
the functions under test import nothing of Galaxy.
"""

from pathlib import Path

import pytest
from galaxy.tool_util.parameters import input_models_for_tool_source
from galaxy.tool_util.parser.factory import get_tool_source
from galaxy.tool_util_models.parameters import create_field_model
from pydantic import ValidationError

from galaxy_mcp_analysis.core import tool_inputs as rules
from galaxy_mcp_analysis.core.input_problems import problems_error
from galaxy_mcp_analysis.core.tool_input_problems import (
    population_problems,
    problems_from_validation,
)

TOOL = """<tool id="t" name="t" version="1.0">
  <command>true</command>
  <inputs>
    <param name="input" type="data" format="tabular"/>
    <param name="column" type="integer" value="1" min="1" max="9"/>
    <param name="ratio" type="float" value="0.5" optional="true"/>
    <param name="flag" type="boolean" checked="false"/>
    <param name="label" type="text" value="x"/>
    <param name="order" type="select">
      <option value="ASC">Ascending</option>
      <option value="DESC">Descending</option>
    </param>
    <param name="which" type="select" multiple="true">
      <option value="a">a</option><option value="b">b</option>
    </param>
    <conditional name="mode">
      <param name="kind" type="select">
        <option value="first" selected="true">First</option>
        <option value="index">By index</option>
        <option value="name">By name</option>
      </param>
      <when value="first"/>
      <when value="index"><param name="index" type="integer" value="0"/></when>
      <when value="name"><param name="identifier" type="text" value=""/></when>
    </conditional>
    <repeat name="queries" min="0">
      <param name="input2" type="data" format="txt"/>
      <section name="opts"><param name="n" type="integer" value="3"/></section>
    </repeat>
  </inputs>
  <outputs><data name="out" format="txt"/></outputs>
</tool>
"""
DATASET = {"src": "hda", "id": "f2db41e1fa331b3e"}


@pytest.fixture(scope="module")
def parameters(tmp_path_factory):
    path = tmp_path_factory.mktemp("tool") / "t.xml"
    path.write_text(TOOL)
    return list(input_models_for_tool_source(get_tool_source(str(path))).parameters)


def problems(parameters, inputs):
    nested, _, found = rules.flat_to_nested(inputs, parameters)
    state = rules.normalise(nested, parameters)
    try:
        create_field_model(parameters, "T", "relaxed_request")(**rules.request_form(state, parameters))
    except ValidationError as error:
        found += problems_from_validation(error.errors(), parameters, state, "inputs", "Tool 't'")
    return {problem.path: problem for problem in found}


def test_flat_keys_become_nested_and_mix_with_nested_values(parameters):
    nested, passed, found = rules.flat_to_nested(
        {
            "input": DATASET,
            "mode|kind": "index",
            "mode": {"index": "2"},
            "queries_1|input2": DATASET,
            "queries_1|opts|n": 4,
            "queries_0|input2": DATASET,
            "__job_resource|x": "y",
            "use_cached_job": False,
        },
        parameters,
    )
    assert found == []
    assert nested == {
        "input": DATASET,
        "mode": {"kind": "index", "index": "2"},
        "queries": [{"input2": DATASET}, {"input2": DATASET, "opts": {"n": 4}}],
    }
    assert passed == {"__job_resource|x": "y", "use_cached_job": False}
    assert rules.nested_to_flat(nested, parameters) == {
        "input": DATASET,
        "mode|kind": "index",
        "mode|index": "2",
        "queries_0|input2": DATASET,
        "queries_1|input2": DATASET,
        "queries_1|opts|n": 4,
    }


def test_a_value_given_flat_and_nested_differently_is_a_problem(parameters):
    _, _, found = rules.flat_to_nested({"mode": {"kind": "index"}, "mode|kind": "name"}, parameters)
    assert [(problem.path, problem.rule) for problem in found] == [("inputs.mode.kind", "invalid_value")]


def test_names_that_only_look_like_repeats_stay_names(parameters):
    nested, _, _ = rules.flat_to_nested({"column_0|x": 1}, parameters)
    assert nested == {"column_0": {"x": 1}}


def test_number_strings_and_other_legacy_forms_are_normalised(parameters):
    state = rules.normalise(
        {"column": "2", "ratio": "", "flag": "True", "label": 7, "which": "a, b", "mode": {"kind": "index", "index": "3"}},
        parameters,
    )
    assert state == {
        "column": 2,
        "ratio": None,
        "flag": True,
        "label": "7",
        "which": ["a", "b"],
        "mode": {"kind": "index", "index": 3},
    }
    assert rules.normalise({"column": "two", "flag": "yes"}, parameters) == {"column": "two", "flag": "yes"}


COLUMNS_TOOL = """<tool id="c" name="c" version="1.0">
  <command>true</command>
  <inputs>
    <param name="input" type="data" format="tabular"/>
    <param name="key" type="data_column" data_ref="input"/>
    <param name="keep" type="data_column" data_ref="input" multiple="true"/>
  </inputs>
  <outputs><data name="out" format="txt"/></outputs>
</tool>
"""


def test_a_data_column_label_is_read_as_galaxy_reads_it_and_reported(tmp_path):
    """Galaxy's column parameter reads "c3" as column 3; the preflight sends 3 and says so."""
    path = tmp_path / "c.xml"
    path.write_text(COLUMNS_TOOL)
    parameters = list(input_models_for_tool_source(get_tool_source(str(path))).parameters)
    given = {"input": DATASET, "key": "c3", "keep": "c1,2"}
    assert rules.normalise(given, parameters) == {"input": DATASET, "key": 3, "keep": [1, 2]}
    assert rules.column_labels(given, parameters) == [
        {"path": "inputs.key", "given": "c3", "sent": 3},
        {"path": "inputs.keep", "given": "c1,2", "sent": [1, 2]},
    ]
    # Only Galaxy's own label form: a capital C or a name stays for validation to judge.
    assert rules.normalise({"key": "C3"}, parameters) == {"key": "C3"}
    assert rules.column_labels({"key": 3, "keep": [1]}, parameters) == []


BOOLEANS_TOOL = """<tool id="booleans" name="booleans" version="1.0" profile="20.05">
  <command>echo</command>
  <inputs>
    <param name="on" type="boolean" checked="true"/>
    <param name="off" type="boolean"/>
    <param name="maybe" type="boolean" optional="true"/>
    <section name="more" title="More"><param name="deep" type="boolean" checked="true"/></section>
  </inputs>
  <outputs><data name="out" format="txt"/></outputs>
</tool>
"""


def test_a_null_boolean_means_its_default_and_says_so(tmp_path):
    """For old profiles: null on a non-optional boolean becomes its default (never the false Galaxy's legacy
    path would read), reported; an optional boolean keeps its null; other values are left alone."""
    path = tmp_path / "b.xml"
    path.write_text(BOOLEANS_TOOL)
    parameters = list(input_models_for_tool_source(get_tool_source(str(path))).parameters)
    given = {"on": None, "off": None, "maybe": None, "more": {"deep": None}}
    state, report = rules.null_booleans_defaulted(given, parameters, "21.05")
    assert state == {"on": True, "off": False, "maybe": None, "more": {"deep": True}}
    assert report == [{"path": "inputs.on", "given": None, "sent": True},
                      {"path": "inputs.off", "given": None, "sent": False},
                      {"path": "inputs.more.deep", "given": None, "sent": True}]
    assert rules.null_booleans_defaulted({"on": False, "more": {"deep": "true"}}, parameters, "21.05") == (
        {"on": False, "more": {"deep": "true"}}, [])
    # The rule is decided here, by profile, once: from 24.2 on the null is Galaxy's request model's to refuse.
    assert rules.null_booleans_defaulted(given, parameters, "24.2") == (given, [])
    assert rules.null_booleans_defaulted(given, parameters, None)[0]["on"] is True  # no profile: the oldest
    assert given == {"on": None, "off": None, "maybe": None, "more": {"deep": None}}  # the caller's copy untouched

@pytest.fixture(scope="module")
def siblings():
    """The corpus wrapper whose sibling branches give one name two types (test/corpus)."""
    path = Path(__file__).parents[2] / "corpus" / "tools" / "corpus_branches.xml"
    return list(input_models_for_tool_source(get_tool_source(str(path))).parameters)


@pytest.mark.parametrize("given", [
    {"cond|mode": "b", "cond|size": "800", "cond|extra": "7", "outer|kind": "two", "outer|inner|pick": "p",
     "outer|inner|n": "0.25"},
    {"cond|size": "800", "cond|extra": "7", "cond|mode": "b", "outer|inner|n": "0.25", "outer|inner|pick": "p",
     "outer|kind": "two"},
    {"cond": {"mode": "b", "size": "800", "extra": "7"}, "outer": {"kind": "two", "inner": {"pick": "p", "n": "0.25"}}},
], ids=["flat", "flat, selectors last", "nested"])
def test_a_name_sibling_branches_type_differently_is_typed_by_the_selected_branch(siblings, given):
    """Branch b's size and extra are integers (branch a's a select and a hidden); branch two's inner
    conditional has a float n (branch one's an integer): each value is typed by the branch the request selects."""
    assert problems(siblings, given) == {}
    nested, _, _ = rules.flat_to_nested(given, siblings)
    state = rules.normalise(nested, siblings)
    assert state["cond"] == {"mode": "b", "size": 800, "extra": 7}
    assert state["outer"] == {"kind": "two", "inner": {"pick": "p", "n": 0.25}}
    assert rules.nested_to_flat(state, siblings)["cond|size"] == 800
    # The other branches still type their own: a's size is one of its options.
    assert problems(siblings, {"cond|mode": "a", "cond|size": "large"}) == {}
    assert set(problems(siblings, {"cond|mode": "a", "cond|size": "800"})) == {"inputs.cond.size"}


def test_legacy_batch_becomes_the_models_batch_and_back(parameters):
    batch = {"batch": True, "values": [{"src": "hdca", "id": "c1"}]}
    form = rules.request_form({"input": batch, "queries": [{"input2": {"values": [DATASET]}}]}, parameters)
    assert form == {"input": {"__class__": "Batch", "values": [{"src": "hdca", "id": "c1"}]}, "queries": [{"input2": DATASET}]}
    assert rules.legacy_batches(form, parameters)["input"] == batch


def test_the_silent_drop_case_names_both_misspellings(parameters):
    found = problems(parameters, {"input": DATASET, "colum": "2", "order": "ASC", "stlye": "num"})
    assert found["inputs.colum"].rule == "unknown_parameter"
    assert "Did you mean 'column'" in found["inputs.colum"].message
    assert found["inputs.stlye"].rule == "unknown_parameter"


def test_every_rule_gets_its_own_words_never_pydantics(parameters):
    found = problems(
        parameters,
        {
            "column": 12,
            "order": "asc",
            "which": ["a", "c"],
            "flag": "maybe",
            "mode": {"kind": "index", "identifier": "x"},
            "queries": [{"input2": 5, "opts": {"m": 1}}],
        },
    )
    assert {path: problem.rule for path, problem in found.items()} == {
        "inputs.input": "missing_required",
        "inputs.column": "out_of_range",
        "inputs.order": "not_an_option",
        "inputs.which": "not_an_option",
        "inputs.flag": "wrong_type",
        "inputs.mode.identifier": "unselected_branch",
        "inputs.queries[0].input2": "wrong_type",
        "inputs.queries[0].opts.m": "unknown_parameter",
    }
    assert found["inputs.order"].valid_values == ("ASC", "DESC")
    assert "Did you mean 'ASC'" in found["inputs.order"].message
    assert "branch kind='name'" in found["inputs.mode.identifier"].message
    for problem in found.values():
        text = problem.message + problem.suggestion
        assert "pydantic" not in text and "DynamicModel" not in text and "Input should be" not in text


def test_a_branch_parameter_without_its_test_value_names_the_default_branch(parameters):
    found = problems(parameters, {"input": DATASET, "mode": {"index": 2}})
    assert found["inputs.mode.index"].rule == "unselected_branch"
    assert "the default, as it is not given" in found["inputs.mode.index"].message


def test_an_unknown_branch_lists_the_branches(parameters):
    found = problems(parameters, {"input": DATASET, "mode": {"kind": "last"}})
    assert found["inputs.mode.kind"].rule == "not_an_option"
    assert found["inputs.mode.kind"].valid_values == ("first", "index", "name")


def test_problems_become_one_validation_error(parameters):
    found = problems(parameters, {"colum": 1, "order": "x"})
    error = problems_error(list(found.values()), "Tool 't' cannot run with these inputs")
    assert error.code.value == "VALIDATION_ERROR"
    for path in ("inputs.colum", "inputs.order", "inputs.input"):
        assert path in error.message
    assert "Nothing was queued or created." in error.message


def test_data_values_follow_only_the_selected_branches(parameters):
    state = {"input": DATASET, "queries": [{"input2": {"batch": True, "values": [{"src": "hdca", "id": "c"}]}}]}
    assert [(path, reference["src"]) for path, _, reference in rules.data_values(state, parameters)] == [
        ("inputs.input", "hda"),
        ("inputs.queries[0].input2.values[0]", "hdca"),
    ]
    assert [path for path, _, _ in rules.batch_values(state, parameters)] == ["inputs.queries[0].input2"]


def test_galaxys_population_errors_become_problems_at_their_paths():
    errors = {
        "column": "Parameter 'column': an invalid option ('9') was selected (valid options: 2,3,1)",
        "cond": {"inner": "bad inner"},
        "queries": [{}, {"input2": "bad second"}],
        "ignored": "",
    }
    problems = population_problems(errors)
    assert [(problem.path, problem.rule, problem.message) for problem in problems] == [
        ("inputs.column", "invalid_value", errors["column"]),
        ("inputs.cond.inner", "invalid_value", "bad inner"),
        ("inputs.queries[1].input2", "invalid_value", "bad second"),
    ]
    # The fix names the call that judges the corrected request; it never sends a data table's value to a
    # dataset's columns (a data column's own fix is added where its dataset is known: column_rule).
    assert "check_tool_inputs(history_id=..., tool_id=..., inputs=...)" in problems[0].suggestion
    assert "columns" not in problems[0].suggestion
    [empty] = population_problems({"genome": "Parameter 'genome': requires a value, but no legal values defined"})
    assert "pick another branch" in empty.suggestion and "get_tool_input_schema(tool_id=...)" in empty.suggestion


def test_a_select_offering_nothing_says_where_its_options_come_from_and_the_fix_fits():
    """A .loc file or data table the server lacks is no input data to change (sweep3, pico_galaxy effectiveT3)."""
    from types import SimpleNamespace

    from galaxy_mcp_analysis.core.tool_input_problems import not_an_option

    module = SimpleNamespace(name="module", multiple=False)
    from_file = not_an_option(module, "inputs.module", "animal", [], "this server's reference file 'effectiveT3.loc'")
    assert "'effectiveT3.loc'" in from_file.message and "input data" not in from_file.message
    assert "admin" in from_file.suggestion and "get_dataset_details" not in from_file.suggestion
    from_data = not_an_option(module, "inputs.module", "animal", [])
    assert "input data" in from_data.message and "get_dataset_details(dataset_id=...)" in from_data.suggestion


def test_a_repeat_in_a_branch_is_placed_whatever_order_the_flat_keys_come_in(siblings):
    """Galaxy's populated state lists a conditional's test value after its branch (sweep3: apoc's
    templates_source|template_0|input was read as an unknown 'template_0')."""
    flat = {"outer|inner|n": "0.25", "outer|inner|pick": "p", "outer|kind": "two"}
    nested, _, problems = rules.flat_to_nested(flat, siblings)
    assert nested == {"outer": {"kind": "two", "inner": {"pick": "p", "n": "0.25"}}} and problems == []
    state = {"outer": {"inner": {"n": 0.25, "pick": "p"}, "kind": "two"}}
    assert list(rules.nested_to_flat(state, siblings)) == ["outer|kind", "outer|inner|pick", "outer|inner|n"]
