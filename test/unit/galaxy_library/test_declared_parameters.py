"""core.declared_parameters on Galaxy's own typed model of a tool with every kind of group: each parameter in
every branch, once per repeat, with its path, names, repeats and branches."""

from galaxy.tool_util.parameters import input_models_for_tool_source
from galaxy.tool_util.parser import get_tool_source

from galaxy_mcp_analysis.core.declared_parameters import declared_parameters

TOOL = """<tool id="declared" name="declared" version="1.0">
  <command>true</command>
  <inputs>
    <param name="top" type="data" format="txt"/>
    <section name="options" title="Options">
      <conditional name="mode">
        <param name="kind" type="select">
          <option value="one">one</option>
          <option value="many">many</option>
        </param>
        <when value="one">
          <param name="size" type="integer" value="1"/>
        </when>
        <when value="many">
          <repeat name="queries" title="Query">
            <param name="input2" type="data" format="tabular"/>
            <param name="column" type="select"><options from_data_table="nope"/></param>
          </repeat>
        </when>
      </conditional>
    </section>
  </inputs>
  <outputs><data name="out" format="txt"/></outputs>
</tool>
"""


def test_every_branch_and_repeat_is_walked_once(tmp_path):
    path = tmp_path / "declared.xml"
    path.write_text(TOOL)
    parameters = input_models_for_tool_source(get_tool_source(str(path))).parameters
    found = [(d.path, d.names, sorted(d.repeats), d.when) for d in declared_parameters(parameters)]
    many = {"options.mode.kind": "many"}
    assert found == [
        ("top", ("top",), [], None),
        ("options.mode.size", ("options", "mode", "size"), [], {"options.mode.kind": "one"}),
        ("options.mode.queries[].input2", ("options", "mode", "queries", "input2"), [2], many),
        ("options.mode.queries[].column", ("options", "mode", "queries", "column"), [2], many),
    ]
