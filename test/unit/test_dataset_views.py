"""core.dataset_views: an unfinished output shows no borrowed metadata; a peek says it is a preview."""

from galaxy_mcp_analysis.core.dataset_views import (
    honest_dataset_views,
    PEEK_LINES,
)


def dataset(state, **fields):
    return {"model_class": "HistoryDatasetAssociation", "id": "abc", "state": state, **fields}


def test_an_unfinished_output_shows_none_of_its_inputs_metadata():
    for state in ("new", "queued", "running", "paused"):
        view = honest_dataset_views(dataset(state, metadata_data_lines=12, metadata_columns=3, name="out"))
        assert (view["metadata_data_lines"], view["metadata_columns"], view["name"]) == (None, None, "out"), state
        assert "peek_preview" not in view


def test_a_finished_datasets_metadata_is_kept_and_its_peek_is_marked_a_preview():
    view = honest_dataset_views(dataset("ok", metadata_data_lines=12, file_size=300, peek="<table>..."))
    assert view["metadata_data_lines"] == 12
    assert view["peek_preview"] == {
        "is_preview": True, "lines_at_most": PEEK_LINES, "data_lines": 12, "lines_left_out": 12 - PEEK_LINES,
        "file_size": 300, "read_all": "peek_dataset_content(dataset_id='abc')",
    }


def test_a_short_or_uncounted_dataset_leaves_out_nothing_known():
    assert honest_dataset_views(dataset("ok", metadata_data_lines=3, peek="x"))["peek_preview"]["lines_left_out"] == 0
    unknown = honest_dataset_views(dataset("ok", peek="x"))["peek_preview"]
    assert (unknown["data_lines"], unknown["lines_left_out"]) == (None, None)


def test_datasets_are_found_at_any_depth_and_nothing_else_changes():
    element = {"model_class": "DatasetCollectionElement", "object": dataset("queued", metadata_columns=2)}
    collection = {"elements": [element], "metadata_columns": 7}
    view = honest_dataset_views(collection)
    assert view["elements"][0]["object"]["metadata_columns"] is None
    assert view["metadata_columns"] == 7  # not a dataset
    assert collection["elements"][0]["object"]["metadata_columns"] == 2  # a copy, the input untouched
