"""core.collection_summary: collection results stay small whatever the collection's size."""

import json

from galaxy_mcp_analysis.core.collection_summary import (
    collection_fields,
    ELEMENT_SUMMARY_LIMIT,
    summarize_elements,
)


def dataset_element(i):
    # The shape of Galaxy's element view, with the bulk a real dataset carries.
    return {
        "element_identifier": f"sample{i}",
        "element_type": "hda",
        "object": {"id": i, "state": "ok", "peek": "x" * 500, "name": f"sample{i}.fa"},
    }


def pair_element(i):
    return {
        "element_identifier": f"pair{i}",
        "element_type": "dataset_collection",
        "object": {
            "id": 1000 + i,
            "collection_type": "paired",
            "populated_state": "ok",
            "element_count": 2,
            "elements": [dataset_element(2 * i), dataset_element(2 * i + 1)],
        },
    }


def encode(value):
    return f"enc{value}"


def test_a_small_list_is_listed_whole_with_encoded_ids():
    summary = summarize_elements([dataset_element(0), dataset_element(1)], encode)
    assert summary == {
        "elements": [
            {"identifier": "sample0", "element_type": "hda", "id": "enc0", "state": "ok"},
            {"identifier": "sample1", "element_type": "hda", "id": "enc1", "state": "ok"},
        ],
        "elements_shown": 2,
        "elements_truncated": False,
    }


def test_ten_thousand_elements_summarise_in_a_few_kilobytes():
    summary = summarize_elements([dataset_element(i) for i in range(10_000)], encode)
    assert summary["elements_shown"] == ELEMENT_SUMMARY_LIMIT and summary["elements_truncated"] is True
    assert len(json.dumps(summary)) < 6_000


def test_nested_elements_count_against_the_same_budget():
    summary = summarize_elements([pair_element(i) for i in range(3)], encode, limit=4)
    first, second = summary["elements"]
    assert first["collection_type"] == "paired" and first["element_count"] == 2 and first["state"] == "ok"
    assert [e["identifier"] for e in first["elements"]] == ["sample0", "sample1"]
    assert [e["identifier"] for e in second["elements"]] == []  # the budget ran out at the pair itself
    assert summary["elements_shown"] == 4 and summary["elements_truncated"] is True


def test_a_nested_collection_that_fits_is_not_truncated():
    summary = summarize_elements([pair_element(0)], encode, limit=3)
    assert summary["elements_shown"] == 3 and summary["elements_truncated"] is False


def test_collection_fields_are_the_contracts():
    hdca = {"hid": 4, "name": "c", "collection_type": "list", "element_count": 2, "populated_state": "ok", "x": 1}
    assert collection_fields(hdca) == {
        "hid": 4, "name": "c", "collection_type": "list", "element_count": 2, "populated_state": "ok"
    }
