"""core.tool_schema: get_tool_input_schema's schema, template and data inputs, rendered from real tool XML.

The parameter objects are Galaxy's own typed model (``input_models_for_tool_source``) of tools
Galaxy ships (sort1, cat1, __EXTRACT_DATASET__), called as ``operations.tool_inputs`` calls the
renderer when it models a loaded tool; the renderer itself imports nothing of Galaxy.
"""

import copy
import importlib.util
from pathlib import Path

import pytest
from galaxy.tool_util.parameters import input_models_for_tool_source
from galaxy.tool_util.parser import get_tool_source

from galaxy_mcp_analysis.core import tool_schema
from galaxy_mcp_analysis.operations.tool_models import modelled_parameters

TOOLS = Path(importlib.util.find_spec("galaxy.tools").submodule_search_locations[0])

DYNAMIC_TOOL = """<tool id="dyn" name="dyn" version="1.0">
  <command>true</command>
  <inputs>
    <param name="table" type="data" format="tabular"/>
    <conditional name="mode">
      <param name="kind" type="select">
        <option value="plain">Plain</option>
        <option value="picked">Picked</option>
      </param>
      <when value="plain"/>
      <when value="picked">
        <param name="extra" type="data" format="txt" optional="true"/>
        <repeat name="picks" title="Pick">
          <param name="field" type="select">
            <options from_dataset="table"><column name="value" index="0"/></options>
          </param>
        </repeat>
      </when>
    </conditional>
  </inputs>
  <outputs><data name="out" format="txt"/></outputs>
</tool>
"""


def parameters_of(path: Path) -> list:
    """Galaxy's typed model of the tool as the mixin completes it (``operations.tool_models``)."""
    source = get_tool_source(str(path))
    return modelled_parameters(input_models_for_tool_source(source).parameters, source)


def rendered(parameters: list) -> dict:
    """What the mixin computes once per loaded tool (``ModelledTool``), by the same calls."""
    return {
        "schema": tool_schema.object_schema(parameters, top=True),
        "template": tool_schema.template(parameters),
        "data_inputs": list(tool_schema.data_inputs(parameters)),
        "dynamic_selects": list(tool_schema.dynamic_selects(parameters)),
    }


@pytest.fixture(scope="module")
def sort1():
    return rendered(parameters_of(TOOLS / "bundled" / "filters" / "sorter.xml"))


@pytest.fixture(scope="module")
def cat1():
    return rendered(parameters_of(TOOLS / "bundled" / "filters" / "catWrapper.xml"))


@pytest.fixture(scope="module")
def extract_dataset():
    return rendered(parameters_of(TOOLS / "extract_dataset.xml"))


@pytest.fixture(scope="module")
def dynamic(tmp_path_factory):
    path = tmp_path_factory.mktemp("tool") / "dyn.xml"
    path.write_text(DYNAMIC_TOOL)
    return rendered(parameters_of(path))


def test_sort1_is_one_object_of_its_parameters_with_the_dataset_required(sort1):
    schema = sort1["schema"]
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert list(schema["properties"]) == ["input", "column", "style", "order", "column_set", "header_lines"]
    assert schema["required"] == ["input"]


def test_a_dataset_input_is_a_reference_of_the_kinds_a_tool_request_takes(sort1):
    dataset = sort1["schema"]["properties"]["input"]
    assert dataset["properties"]["src"] == {"enum": tool_schema.TOOL_DATA_SOURCES}
    assert tool_schema.TOOL_DATA_SOURCES == ["hda", "ldda", "dce"]
    assert dataset["required"] == ["src", "id"] and dataset["additionalProperties"] is False
    assert dataset["description"] == "dataset of type tabular"
    assert dataset["title"] == "Sort Dataset"


def test_a_select_is_an_enum_of_its_option_values_with_their_labels_and_default(sort1):
    properties = sort1["schema"]["properties"]
    assert properties["style"]["enum"] == ["num", "gennum", "alpha"]
    assert properties["style"]["x-labels"] == {
        "num": "Numerical sort",
        "gennum": "General numeric sort",
        "alpha": "Alphabetical sort",
    }
    assert properties["style"]["default"] == "num"
    assert properties["order"]["enum"] == ["DESC", "ASC"] and properties["order"]["default"] == "DESC"
    assert properties["column"]["type"] == "integer" and "1-based" in properties["column"]["description"]
    assert properties["header_lines"] == {
        "type": "integer",
        "default": 0,
        "title": "Number of header lines to skip",
    }


def test_a_repeat_is_an_array_of_objects_of_its_parameters(sort1):
    repeat = sort1["schema"]["properties"]["column_set"]
    assert repeat["type"] == "array" and "minItems" not in repeat
    assert list(repeat["items"]["properties"]) == ["other_column", "other_style", "other_order"]
    assert repeat["items"]["properties"]["other_style"]["enum"] == ["num", "gennum", "alpha"]
    assert repeat["items"]["additionalProperties"] is False


def test_sort1s_template_holds_every_default_and_a_dataset_placeholder(sort1):
    assert sort1["template"] == {
        "input": {"src": "hda", "id": "<dataset_id>"},
        "column": None,
        "style": "num",
        "order": "DESC",
        "column_set": [],
        "header_lines": 0,
    }
    assert sort1["dynamic_selects"] == []


def test_sort1s_dataset_input_says_how_to_map_a_collection_over_it(sort1):
    (entry,) = sort1["data_inputs"]
    assert entry["path"] == entry["flat_name"] == "input"
    assert entry["datatypes"] == ["tabular"]
    assert entry["multiple"] is False and entry["optional"] is False and entry["collection_types"] is None
    assert entry["takes_collection"] is False
    assert entry["map_over"] == {"input": {"batch": True, "values": [{"src": "hdca", "id": "<collection_id>"}]}}
    assert "when" not in entry


def test_cat1s_repeat_requires_the_dataset_of_each_block(cat1):
    schema = cat1["schema"]
    assert list(schema["properties"]) == ["input1", "queries"] and schema["required"] == ["input1"]
    queries = schema["properties"]["queries"]
    assert queries["type"] == "array"
    assert queries["items"]["required"] == ["input2"]
    assert queries["items"]["properties"]["input2"]["description"] == "dataset of type data"
    assert cat1["template"] == {"input1": {"src": "hda", "id": "<dataset_id>"}, "queries": []}


def test_a_dataset_input_in_a_repeat_is_named_by_its_path_and_flat_name(cat1):
    first, repeated = cat1["data_inputs"]
    assert first["path"] == "input1"
    assert repeated["path"] == "queries[].input2"
    assert repeated["flat_name"] == "queries_<index>|input2"
    assert repeated["datatypes"] == ["data"]
    assert list(repeated["map_over"]) == ["queries_0|input2"]


def test_a_collection_input_takes_collection_references_of_its_types(extract_dataset):
    collection = extract_dataset["schema"]["properties"]["input"]
    assert collection["properties"]["src"] == {"enum": tool_schema.TOOL_COLLECTION_SOURCES}
    assert tool_schema.TOOL_COLLECTION_SOURCES == ["hdca", "dce"]
    assert collection["description"] == "collection of type list, paired, paired_or_unpaired, record"
    assert extract_dataset["schema"]["required"] == ["input"]
    (entry,) = extract_dataset["data_inputs"]
    assert entry["collection_types"] == ["list", "paired", "paired_or_unpaired", "record"]
    assert entry["takes_collection"] is True


def test_a_conditional_is_one_of_its_branches_each_with_its_own_parameters(extract_dataset):
    which = extract_dataset["schema"]["properties"]["which"]
    assert which["type"] == "object"
    assert which["description"] == "branch chosen by 'which_dataset'; without it: 'first'"
    first, by_identifier, by_index = which["oneOf"]
    assert first == {
        "properties": {"which_dataset": {"const": "first", "title": "The first dataset"}},
        "additionalProperties": False,
    }
    # A branch other than the default one must name itself; the default branch may be left out.
    assert by_identifier["required"] == by_index["required"] == ["which_dataset"]
    assert list(by_identifier["properties"]) == ["which_dataset", "identifier"]
    assert by_identifier["properties"]["which_dataset"] == {
        "const": "by_identifier",
        "title": "Select by element identifier",
    }
    assert by_identifier["properties"]["identifier"]["type"] == "string"
    assert by_index["properties"]["index"] == {"type": "integer", "default": 0, "title": "Element index:"}
    assert all("type" not in branch and branch["additionalProperties"] is False for branch in which["oneOf"])


def test_a_conditionals_template_is_its_default_branch(extract_dataset):
    assert extract_dataset["template"] == {
        "input": {"src": "hdca", "id": "<collection_id>"},
        "which": {"which_dataset": "first"},
    }


def test_a_select_whose_options_galaxy_computes_is_filled_in_as_the_mixin_does(dynamic):
    """get_tool_input_schema replaces a dynamic select's placeholder with the options Galaxy computed."""
    assert dynamic["dynamic_selects"] == [("mode", "picks", "field")]
    schema = copy.deepcopy(dynamic["schema"])
    placeholder = tool_schema.at(schema, ("mode", "picks", "field"))
    assert placeholder == {"type": "string", "description": "options depend on the server or history"}
    placeholder.update(tool_schema.enum_schema([("chr1", "chr1"), ("chr2", "Chromosome 2")]))
    picked = schema["properties"]["mode"]["oneOf"][1]
    field = picked["properties"]["picks"]["items"]["properties"]["field"]
    assert field["enum"] == ["chr1", "chr2"]
    assert field["x-labels"] == {"chr2": "Chromosome 2"}
    # The cached rendering is not changed by filling in a copy.
    assert "enum" not in tool_schema.at(dynamic["schema"], ("mode", "picks", "field"))


def test_a_data_input_under_a_conditional_names_its_branch(dynamic):
    table, extra = dynamic["data_inputs"]
    assert table["path"] == "table" and "when" not in table
    assert extra["path"] == "mode.extra" and extra["flat_name"] == "mode|extra"
    assert extra["when"] == {"mode.kind": "picked"}
    assert extra["optional"] is True and extra["datatypes"] == ["txt"]
    assert dynamic["template"] == {"table": {"src": "hda", "id": "<dataset_id>"}, "mode": {"kind": "plain"}}


def test_collection_types_are_the_comma_separated_types_of_a_collection_input(extract_dataset):
    (collection,) = [p for p in parameters_of(TOOLS / "extract_dataset.xml") if p.name == "input"]
    assert tool_schema.collection_types(collection) == ["list", "paired", "paired_or_unpaired", "record"]


def test_url_parameters_say_they_take_a_url():
    """Galaxy's model types baseurl and directory_uri parameters as URLs; a bare string is refused."""
    from galaxy_mcp_analysis.core.tool_input_problems import _EXPECTED

    ucsc = parameters_of(TOOLS / "bundled" / "data_source" / "ucsc_tablebrowser.xml")
    export = parameters_of(TOOLS / "bundled" / "data_export" / "export_remote.xml")
    assert tool_schema.object_schema(ucsc, top=True)["properties"]["GALAXY_URL"] == {
        "type": "string", "format": "uri", "description": "an http(s) URL"}
    directory = tool_schema.object_schema(export, top=True)["properties"]["d_uri"]
    assert directory["format"] == "uri" and "file sources" in directory["description"], directory
    assert "URL" in _EXPECTED["gx_baseurl"] and "URI" in _EXPECTED["gx_directory_uri"]
