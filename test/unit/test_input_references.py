"""core.map_over.input_references: which existing items a run_tool ``inputs`` names (checked before Galaxy runs)."""

from galaxy_mcp_analysis.core.map_over import (
    input_references,
    MAX_REFERENCE_DEPTH,
)


def test_plain_batch_and_multiple_values_are_found_with_their_paths():
    inputs = {
        "input1": {"src": "hda", "id": "a1"},
        "queries_0|input2": {"batch": True, "values": [{"src": "hdca", "id": "c1"}]},
        "many": [{"src": "hda", "id": "d1"}, {"src": "ldda", "id": "l1"}],
        "columnList": "c1,c2",
    }
    assert input_references(inputs) == [
        ("input1", "hda", "a1"),
        ("queries_0|input2.values[0]", "hdca", "c1"),
        ("many[0]", "hda", "d1"),
        ("many[1]", "ldda", "l1"),
    ]


def test_other_sources_and_malformed_values_are_left_to_galaxy():
    inputs = {"a": {"src": "dce", "id": "x"}, "b": {"src": "hda", "id": 5}, "c": {"src": "url", "id": "y"}, "d": None}
    assert input_references(inputs) == []


def test_nesting_is_searched_to_a_bound_and_never_recurses_without_end():
    deep: dict = {"src": "hda", "id": "deep"}
    for _ in range(MAX_REFERENCE_DEPTH + 50):
        deep = {"a": deep}
    assert input_references({"x": deep}) == []
    shallow: dict = {"src": "hda", "id": "ok"}
    for _ in range(10):
        shallow = {"a": [shallow]}
    assert [item_id for _, _, item_id in input_references({"x": shallow})] == ["ok"]


def test_non_dict_inputs_name_nothing():
    assert input_references("x") == [] and input_references([]) == []
