"""core.managing: changes over recorded inputs, delete/restore items, update fields (histories, datasets,
collections), cancellable states."""

import pytest

from galaxy_mcp_analysis.core.errors import AnalysisError
from galaxy_mcp_analysis.core.managing import (
    cancellable,
    collection_update,
    dataset_update,
    history_item_refs,
    history_update,
    HistoryItemRef,
    MAX_HISTORY_ITEMS,
    merge_changes,
)

DATASET = {"src": "hda", "id": "aaaaaaaaaaaaaaaa"}
OTHER = {"src": "hda", "id": "bbbbbbbbbbbbbbbb"}
#: Shaped like __EXTRACT_DATASET__ (a conditional), cat1 (a repeat) and a section, together.
RECORDED = {
    "input": DATASET,
    "which": {"which_dataset": "first"},
    "queries": [{"input2": DATASET}, {"input2": OTHER}],
    "advanced": {"column": 2, "header": False, "mode": {"kind": "fast", "level": 3}},
    "columns": [1, 3],
}
SELECTORS = {("which",): "which_dataset", ("advanced", "mode"): "kind"}


def merged(changes):
    return merge_changes(RECORDED, changes, SELECTORS)


def test_no_changes_is_a_copy_of_the_recorded_inputs():
    for changes in (None, {}):
        result = merged(changes)
        assert result == RECORDED and result is not RECORDED
        result["queries"][0]["input2"]["id"] = "changed"
        assert RECORDED["queries"][0]["input2"]["id"] == "aaaaaaaaaaaaaaaa"


def test_a_top_level_change_replaces_one_value_and_keeps_the_rest():
    assert merged({"columns": [2]}) == {**RECORDED, "columns": [2]}
    assert merged({"input": OTHER}) == {**RECORDED, "input": OTHER}


def test_nested_and_flat_changes_reach_the_same_parameter():
    nested = merged({"advanced": {"header": True}})
    flat = merged({"advanced|header": True})
    assert nested == flat
    assert nested["advanced"] == {"column": 2, "header": True, "mode": {"kind": "fast", "level": 3}}
    assert merged({"advanced|mode|level": 5})["advanced"]["mode"] == {"kind": "fast", "level": 5}
    both = merged({"advanced|mode|level": 5, "advanced": {"column": 4, "mode": {"kind": "fast"}}})
    assert both["advanced"] == {"column": 4, "header": False, "mode": {"kind": "fast", "level": 5}}


def test_a_dataset_reference_is_replaced_whole_never_merged():
    result = merged({"input": {"src": "hdca", "id": "cccccccccccccccc"}})
    assert result["input"] == {"src": "hdca", "id": "cccccccccccccccc"}
    batch = {"batch": True, "values": [{"src": "hdca", "id": "cccccccccccccccc"}]}
    assert merged({"input": batch})["input"] == batch


def test_a_repeat_block_is_named_by_its_index():
    assert merged({"queries_1|input2": DATASET})["queries"] == [{"input2": DATASET}, {"input2": DATASET}]
    assert merged({"queries_0": {"input2": OTHER}})["queries"][0] == {"input2": OTHER}
    # The next index adds a block; a list replaces them all.
    assert merged({"queries_2|input2": OTHER})["queries"][2] == {"input2": OTHER}
    assert merged({"queries": [{"input2": OTHER}]})["queries"] == [{"input2": OTHER}]


def test_a_gap_in_the_repeat_blocks_is_refused_with_its_path():
    with pytest.raises(AnalysisError) as refused:
        merged({"queries_5|input2": OTHER})
    assert refused.value.code.value == "VALIDATION_ERROR"
    assert "- changes.queries_5:" in refused.value.message and "2 block(s)" in refused.value.message
    assert "Nothing was run." in refused.value.message


def test_a_new_selector_value_drops_the_recorded_branch():
    assert merged({"which": {"which_dataset": "by_identifier", "identifier": "s1"}})["which"] == {
        "which_dataset": "by_identifier", "identifier": "s1"}
    assert merged({"which|which_dataset": "by_identifier"})["which"] == {"which_dataset": "by_identifier"}
    # Nested conditionals too; the same selector value keeps the branch.
    assert merged({"advanced|mode|kind": "slow"})["advanced"]["mode"] == {"kind": "slow"}
    assert merged({"advanced|mode|kind": "fast"})["advanced"]["mode"] == {"kind": "fast", "level": 3}


def test_a_misspelled_name_is_passed_on_for_run_tool_to_refuse():
    """Names are run_tool's to check (issue 15's preflight), so the merge keeps them as given."""
    assert merged({"colum": 3})["colum"] == 3


def test_a_parameter_given_twice_is_refused():
    with pytest.raises(AnalysisError) as refused:
        merged({"advanced|header": True, "advanced": {"header": False}})
    assert "already sets" in refused.value.message
    with pytest.raises(AnalysisError):
        merged({"input|x": 1, "input": DATASET})


def test_an_empty_flat_name_is_refused():
    with pytest.raises(AnalysisError) as refused:
        merged({"advanced||header": True})
    assert "empty name" in refused.value.message


def test_history_items_are_checked_for_shape_and_all_problems_named():
    refs = history_item_refs([{"src": "hda", "id": "a1"}, {"src": "hdca", "id": "b2"}])
    assert refs == [HistoryItemRef("items[0]", "hda", "a1"), HistoryItemRef("items[1]", "hdca", "b2")]
    with pytest.raises(AnalysisError) as refused:
        history_item_refs([{"src": "hda", "id": "a1"}, {"src": "ldda", "id": "x"}, {"src": "hda", "id": ""},
                           {"src": "hda", "id": "a1"}, "a1", {"src": "hda", "id": "z", "name": "n"}])
    message = refused.value.message
    for path in ("items[1].src", "items[2].id", "items[3]", "items[4]", "items[5]"):
        assert f"- {path}:" in message, (path, message)
    assert "- items[0]:" not in message and "Nothing was changed." in message


@pytest.mark.parametrize("items", [[], None, "a1", [{}] * (MAX_HISTORY_ITEMS + 1)])
def test_no_items_or_too_many_are_refused(items):
    with pytest.raises(AnalysisError) as refused:
        history_item_refs(items)
    assert refused.value.code.value == "VALIDATION_ERROR"


def test_dataset_update_names_galaxys_fields_with_the_datatype_last():
    payload = dataset_update(file_type="tabular", name="counts", dbkey="hg38", tags=["qc"], visible=False)
    assert list(payload) == ["name", "genome_build", "tags", "visible", "datatype"]
    assert payload["datatype"] == "tabular" and payload["genome_build"] == "hg38"
    assert dataset_update(tags=[]) == {"tags": []}


@pytest.mark.parametrize("fields", [
    {}, {"name": "   "}, {"name": "a\x00b"}, {"annotation": "x" * 2001}, {"tags": [""]}, {"tags": ["t" * 256]},
    {"tags": ["x"] * 101}, {"file_type": "tab\x00ular"}, {"dbkey": ""}, {"dbkey": "h" * 256},
])
def test_dataset_update_refuses_nothing_or_unstorable_fields(fields):
    with pytest.raises(AnalysisError) as refused:
        dataset_update(**fields)
    assert refused.value.code.value == "VALIDATION_ERROR"


def test_cancellable_states():
    for state in ("new", "queued", "running", "paused", "waiting", "upload", "resubmitted"):
        assert cancellable(state), state
    for state in ("ok", "error", "deleted", "deleting", "skipped", "stopped"):
        assert not cancellable(state), state


def test_collection_update_names_galaxys_fields():
    assert collection_update(name="reads", tags=["name:run1"], visible=False) == {
        "name": "reads", "tags": ["name:run1"], "visible": False}
    assert collection_update(tags=[]) == {"tags": []}
    assert collection_update(visible=True) == {"visible": True}


@pytest.mark.parametrize("fields", [
    {}, {"name": "   "}, {"name": ""}, {"name": "a\x00b"}, {"tags": [""]}, {"tags": ["t" * 256]}, {"tags": ["x"] * 101},
    {"name": " ", "tags": ["qc"], "visible": True},
])
def test_collection_update_refuses_nothing_or_unstorable_fields(fields):
    with pytest.raises(AnalysisError) as refused:
        collection_update(**fields)
    assert refused.value.code.value == "VALIDATION_ERROR"


def test_history_update_names_galaxys_fields():
    assert history_update(name="AMR isolates", annotation="four", tags=["name:amr"]) == {
        "name": "AMR isolates", "annotation": "four", "tags": ["name:amr"]}
    assert history_update(tags=[]) == {"tags": []}
    assert history_update(annotation="") == {"annotation": None}  # Galaxy removes the annotation
    assert history_update(name="n" * 255) == {"name": "n" * 255}


@pytest.mark.parametrize("fields", [
    {}, {"name": "   "}, {"name": "n" * 256}, {"name": "a\x00b"}, {"annotation": "a\x00"}, {"annotation": "é" * 1001},
    {"tags": [""]}, {"tags": ["x"] * 101}, {"name": " ", "tags": ["qc"]},
])
def test_history_update_refuses_nothing_or_unstorable_fields(fields):
    with pytest.raises(AnalysisError) as refused:
        history_update(**fields)
    assert refused.value.code.value == "VALIDATION_ERROR"
