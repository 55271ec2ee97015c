"""Each tool's one example call (ToolFacts.example), declared beside its other facts: a call the tool's own
signature takes, with items named by kind and filled in by ``example_call``."""

import inspect

import pytest

from galaxy_mcp_analysis.core.tool_facts import (
    example_call,
    example_items,
    Item,
)
from galaxy_mcp_analysis.mcp.declaration import TOOL_SPECS
from galaxy_mcp_analysis.tools import TOOL_FACTS


def test_items_are_filled_in_at_any_depth_into_a_fresh_copy():
    example = {"history_id": Item("history"), "inputs": {"input1": {"src": "hda", "id": Item("dataset")}},
               "job_ids": [Item("job")], "limit": 5}
    call = example_call(example, {"history": "h1", "dataset": "d1", "job": "j1"})
    assert call == {"history_id": "h1", "inputs": {"input1": {"src": "hda", "id": "d1"}}, "job_ids": ["j1"], "limit": 5}
    call["inputs"]["input1"]["id"] = "changed"
    assert example["inputs"]["input1"]["id"] == Item("dataset")
    assert example_items(example) == ["history", "dataset", "job"]


def test_an_item_of_an_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="not one of"):
        Item("histroy")


@pytest.mark.parametrize("spec", TOOL_SPECS, ids=lambda spec: spec.name)
def test_every_declared_tool_has_an_example_its_signature_takes(spec):
    example = spec.facts.example
    assert example is not None, f"declare example= in {spec.name}'s analysis_tool"
    parameters = dict(list(inspect.signature(spec.function).parameters.items())[1:])  # after ops
    required = {name for name, parameter in parameters.items() if parameter.default is inspect.Parameter.empty}
    assert set(example) <= set(parameters), sorted(set(example) - set(parameters))
    assert required <= set(example), sorted(required - set(example))


def test_the_stock_table_gives_examples_to_the_stock_tools_the_suite_calls():
    with_example = {name for name, facts in TOOL_FACTS.items() if facts.example is not None}
    assert {"get_job_status", "download_dataset", "invoke_workflow", "upload_file_from_url"} <= with_example
    assert len(with_example) == len(TOOL_SPECS) + 19
