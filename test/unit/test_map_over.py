"""core.map_over: which run_tool inputs are wrapped into Galaxy's batch form, and what io_details says."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from galaxy_mcp_analysis.core.map_over import (
    batch_form,
    COLLECTION_PLACEHOLDER,
    DataInput,
    map_over_hint,
    one_per_name,
    plan_map_over,
)

INPUT1 = DataInput(("input1",))
QUERIES = DataInput(("queries", "input2"), repeats=frozenset({0}))
IN_CONDITIONAL = DataInput(("how", "labels"))
COLLECTION = DataInput(("input",), collection=True)
MULTIPLE = DataInput(("inputs",), multiple=True)
TOOL = [INPUT1, QUERIES, IN_CONDITIONAL, COLLECTION, MULTIPLE]

HDCA = {"src": "hdca", "id": "c0ffee"}


def test_a_bare_collection_on_a_dataset_input_is_wrapped_and_reported():
    plan = plan_map_over(TOOL, {"input1": HDCA})
    assert plan.inputs == {"input1": {"batch": True, "values": [HDCA]}}
    assert plan.mapped_over == [{"input": "input1", "collection_id": "c0ffee", "wrapped": True}]


def test_the_agents_dict_is_not_changed():
    inputs = {"input1": HDCA}
    plan_map_over(TOOL, inputs)
    assert inputs == {"input1": HDCA}


@pytest.mark.parametrize("key", ["queries_0|input2", "queries_12|input2"])
def test_inputs_in_repeat_blocks_are_matched_by_galaxys_flat_names(key):
    plan = plan_map_over(TOOL, {key: HDCA})
    assert plan.inputs[key] == batch_form(HDCA)
    assert plan.mapped_over == [{"input": key, "collection_id": "c0ffee", "wrapped": True}]


def test_inputs_in_conditionals_and_sections_are_matched_by_pipe_names():
    assert plan_map_over(TOOL, {"how|labels": HDCA}).inputs["how|labels"] == batch_form(HDCA)


@pytest.mark.parametrize("key", ["queries|input2", "queries_x|input2", "queries_0|input", "input2", "how", "labels"])
def test_keys_that_name_no_dataset_input_are_left_alone(key):
    plan = plan_map_over(TOOL, {key: HDCA})
    assert plan.inputs == {key: HDCA} and plan.mapped_over == []


def test_collection_inputs_are_never_wrapped():
    plan = plan_map_over(TOOL, {"input": HDCA})
    assert plan.inputs == {"input": HDCA} and plan.mapped_over == []


def test_multiple_dataset_inputs_take_the_collection_whole():
    plan = plan_map_over(TOOL, {"inputs": HDCA})
    assert plan.inputs == {"inputs": HDCA} and plan.mapped_over == []


@pytest.mark.parametrize(
    "value",
    [
        {"values": [HDCA]},
        {"batch": False, "values": [HDCA]},
        {"src": "hda", "id": "d1"},
        {"src": "dce", "id": "e1"},
        {"src": "hdca"},
        [HDCA],
        "c0ffee",
        None,
        {"src": "hdca", "id": "c0ffee", "batch": True},
    ],
)
def test_anything_but_a_bare_collection_reference_is_left_alone(value):
    plan = plan_map_over(TOOL, {"input1": value})
    assert plan.inputs == {"input1": value} and plan.mapped_over == []


def test_the_batch_form_is_left_alone_and_listed_as_mapped_not_wrapped():
    value = {"batch": True, "values": [HDCA, {"src": "hda", "id": "d1"}]}
    plan = plan_map_over(TOOL, {"input1": value})
    assert plan.inputs == {"input1": value}
    assert plan.mapped_over == [{"input": "input1", "collection_id": "c0ffee", "wrapped": False}]


def test_several_inputs_are_wrapped_and_others_kept():
    other = {"src": "hdca", "id": "beef"}
    inputs = {"input1": HDCA, "queries_0|input2": other, "input": HDCA, "param": "x"}
    plan = plan_map_over(TOOL, inputs)
    assert plan.inputs == {
        "input1": batch_form(HDCA),
        "queries_0|input2": batch_form(other),
        "input": HDCA,
        "param": "x",
    }
    assert [entry["input"] for entry in plan.mapped_over] == ["input1", "queries_0|input2"]


def test_a_tool_without_dataset_inputs_changes_nothing():
    assert plan_map_over([], {"input1": HDCA}).inputs == {"input1": HDCA}


def test_names_show_repeat_blocks_with_an_index_placeholder():
    assert QUERIES.name == "queries_<index>|input2"
    assert DataInput(("outer", "inner", "x"), repeats=frozenset({0, 1})).name == "outer_<index>|inner_<index>|x"
    assert DataInput(("outer", "inner", "x"), repeats=frozenset({0, 1})).is_named_by("outer_1|inner_20|x")


def test_parameter_names_are_matched_literally_not_as_patterns():
    dotted = DataInput(("a.b",))
    assert dotted.is_named_by("a.b") and not dotted.is_named_by("axb")


# ---- several declarations of one name (conditional cases) ----


def test_one_per_name_keeps_order_and_lets_the_never_wrapped_declaration_win():
    as_dataset = DataInput(("cond", "input"))
    as_collection = DataInput(("cond", "input"), collection=True)
    assert one_per_name([INPUT1, as_dataset, as_collection]) == [INPUT1, as_collection]
    assert one_per_name([as_collection, as_dataset]) == [as_collection]
    assert one_per_name([as_dataset, DataInput(("cond", "input"))]) == [as_dataset]


# ---- what get_tool_details says ----


def test_a_single_dataset_input_gets_the_exact_map_over_value():
    hint = map_over_hint(QUERIES)
    assert hint["takes_collection"] is False
    placeholder = {"src": "hdca", "id": COLLECTION_PLACEHOLDER}
    assert hint["map_over"] == {"queries_0|input2": {"batch": True, "values": [placeholder]}}


@pytest.mark.parametrize("data_input", [COLLECTION, MULTIPLE])
def test_collection_taking_inputs_say_they_are_never_wrapped(data_input):
    hint = map_over_hint(data_input)
    assert hint["takes_collection"] is True and "map_over" not in hint
    assert "never wrapped" in hint["note"]


# ---- property: wrapping is exactly "bare hdca on a mappable input" ----

VALUES = st.one_of(
    st.just(HDCA),
    st.just({"src": "hda", "id": "d"}),
    st.just({"batch": True, "values": [HDCA]}),
    st.text(max_size=3),
    st.integers(),
)
KEYS = st.sampled_from(["input1", "queries_0|input2", "queries_3|input2", "how|labels", "input", "inputs", "other"])


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(KEYS, VALUES, max_size=7))
def test_only_bare_collections_on_mappable_inputs_change(inputs):
    plan = plan_map_over(TOOL, inputs)
    assert plan.inputs.keys() == inputs.keys()
    mappable = {"input1", "queries_0|input2", "queries_3|input2", "how|labels"}
    wrapped = {key for key, value in inputs.items() if value == HDCA and key in mappable}
    assert {entry["input"] for entry in plan.mapped_over if entry["wrapped"]} == wrapped
    batched = {key for key, value in inputs.items() if isinstance(value, dict) and value.get("batch") is True}
    assert {entry["input"] for entry in plan.mapped_over if not entry["wrapped"]} == batched
    for key, value in inputs.items():
        assert plan.inputs[key] == (batch_form(value) if key in wrapped else value)
