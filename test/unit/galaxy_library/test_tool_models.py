"""operations.tool_models: a data input's formats come from the tool's own XML where Galaxy's typed model
left them out (Galaxy 26.1.0 and 26.1.1 do), by names from the top, never where sibling branches declare
one name differently; where the model has them (26.1.2), the same objects come back.

Galaxy 26.1.0's model is imitated by resetting ``extensions`` to the model's default, ``["data"]``.
"""

import pytest
from galaxy.tool_util.parameters import input_models_for_tool_source

from galaxy_mcp_analysis.core import tool_schema
from galaxy_mcp_analysis.core.declared_formats import with_declared_formats
from galaxy_mcp_analysis.operations.tool_models import (
    declared_formats,
    modelled_parameters,
)

from tool_xml import tool_source_of  # this folder is on sys.path (pytest, no package)

TOOL = """<tool id="t" name="t" version="1.0" profile="24.2">
  <command>true</command>
  <inputs>
    <param argument="--table" type="data" format="tabular,csv"/>
    <param name="anything" type="data" format="data"/>
    <conditional name="mode">
      <param name="how" type="select">
        <option value="one">one</option>
        <option value="two">two</option>
      </param>
      <when value="one">
        <param name="extra" type="data" format="fasta"/>
        <param name="same" type="data" format="bed"/>
      </when>
      <when value="two">
        <param name="extra" type="data" format="fastqsanger"/>
        <param name="same" type="data" format="bed"/>
      </when>
    </conditional>
    <repeat name="runs" title="Run">
      <section name="inner" title="Inner">
        <param name="reads" type="data_collection" collection_type="list" format="fastqsanger"/>
      </section>
    </repeat>
  </inputs>
  <outputs><data name="out" format="txt"/></outputs>
</tool>
"""


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    return tool_source_of(tmp_path_factory, TOOL)


def as_26_1_0(parameters):
    """Galaxy 26.1.0's factory: every data and collection input left at the model's default."""
    return [_reset(parameter) for parameter in parameters]


def _reset(parameter):
    if parameter.parameter_type in ("gx_data", "gx_data_collection"):
        return parameter.model_copy(update={"extensions": ["data"]})
    if parameter.parameter_type == "gx_conditional":
        return parameter.model_copy(update={"whens": [
            when.model_copy(update={"parameters": [_reset(p) for p in when.parameters]}) for when in parameter.whens]})
    if parameter.parameter_type in ("gx_repeat", "gx_section"):
        return parameter.model_copy(update={"parameters": [_reset(p) for p in parameter.parameters]})
    return parameter


def formats_by_input(parameters):
    return {entry["flat_name"]: entry["datatypes"] for entry in tool_schema.data_inputs(parameters)}


def test_the_declarations_are_read_by_names_from_the_top_and_ambiguous_ones_left_out(source):
    assert declared_formats(source) == {
        ("table",): ["tabular", "csv"],
        ("anything",): ["data"],
        ("mode", "same"): ["bed"],  # ("mode", "extra") differs between the branches: left out
        ("runs", "inner", "reads"): ["fastqsanger"],
    }


def test_a_model_without_formats_gets_the_declared_ones(source):
    galaxy_26_1_0 = as_26_1_0(list(input_models_for_tool_source(source).parameters))
    assert all(formats == ["data"] for formats in formats_by_input(galaxy_26_1_0).values())
    completed = modelled_parameters(galaxy_26_1_0, source)
    assert formats_by_input(completed) == {
        "table": ["tabular", "csv"],
        "anything": ["data"],
        "mode|extra": ["data"],  # which of fasta and fastqsanger depends on the branch: left to Galaxy
        "mode|same": ["bed"],
        "runs_<index>|inner|reads": ["fastqsanger"],
    }


def test_a_model_with_formats_is_returned_as_it_is(source):
    parameters = list(input_models_for_tool_source(source).parameters)
    if formats_by_input(parameters)["table"] == ["data"]:
        pytest.skip("this Galaxy's typed model leaves formats out (26.1.0, 26.1.1)")
    assert with_declared_formats(parameters, declared_formats(source)) is parameters


def test_a_loaded_tools_freed_tree_is_parsed_again_from_its_text(tmp_path_factory):
    """Galaxy frees the XML tree of every tool it loads (mem_optimize) and keeps its text."""
    source = tool_source_of(tmp_path_factory, TOOL)
    galaxy_26_1_0 = as_26_1_0(list(input_models_for_tool_source(source).parameters))
    source.mem_optimize()
    assert source.root is None
    assert formats_by_input(modelled_parameters(galaxy_26_1_0, source))["table"] == ["tabular", "csv"]
