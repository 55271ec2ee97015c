"""core.conditional_branches: a conditional's test values that no <when> names are empty branches, as Galaxy's
tool loader makes them; the typed model then takes the requests Galaxy runs and still refuses foreign values.

The parameter objects are Galaxy's own (``input_models_for_tool_source`` on a small tool XML).
"""

import pytest
from galaxy.tool_util.parameters import input_models_for_tool_source
from galaxy.tool_util.parser.factory import get_tool_source
from galaxy.tool_util_models.parameters import (
    ConditionalWhen,
    create_field_model,
)

from galaxy_mcp_analysis.core.conditional_branches import (
    implicit_branches,
    with_implicit_branches,
)
from galaxy_mcp_analysis.core.tool_input_problems import model_problems

TOOL = """<tool id="t" name="t" version="1.0" profile="24.2">
  <command>true</command>
  <inputs>
    <conditional name="stats">
      <param name="report" type="boolean"/>
      <when value="true"><param name="bins" type="integer" value="10"/></when>
    </conditional>
    <repeat name="steps">
      <section name="inner">
        <conditional name="trim">
          <param name="how" type="select">
            <option value="none" selected="true">None</option>
            <option value="auto">Automatic</option>
            <option value="fixed">Fixed</option>
          </param>
          <when value="fixed"><param name="length" type="integer" value="50"/></when>
        </conditional>
      </section>
    </repeat>
    <conditional name="full">
      <param name="on" type="boolean" truevalue="yes" falsevalue="no" checked="true"/>
      <when value="yes"/>
      <when value="no"/>
    </conditional>
  </inputs>
  <outputs><data name="out" format="txt"/></outputs>
</tool>
"""


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    path = tmp_path_factory.mktemp("tool") / "t.xml"
    path.write_text(TOOL)
    written = list(input_models_for_tool_source(get_tool_source(str(path))).parameters)
    return written, with_implicit_branches(written, ConditionalWhen)


def test_the_values_without_a_branch_are_found_with_the_default_among_them(models):
    written, _ = models
    stats, steps, full = written
    trim = steps.parameters[0].parameters[0]
    assert implicit_branches(stats) == [(False, True)]
    assert implicit_branches(trim) == [("none", True), ("auto", False)]
    assert implicit_branches(full) == []


def test_the_completed_model_has_them_at_any_depth_and_leaves_galaxys_own_untouched(models):
    written, completed = models
    trim = completed[1].parameters[0].parameters[0]
    assert [(when.discriminator, when.is_default_when, when.parameters) for when in trim.whens] == [
        ("fixed", False, [trim.whens[0].parameters[0]]), ("none", True, []), ("auto", False, [])]
    assert len(written[1].parameters[0].parameters[0].whens) == 1 and len(written[0].whens) == 1
    assert completed[2] == written[2]


@pytest.mark.parametrize("inputs", [
    {"stats": {"report": False}},
    {"stats|report": "false", "steps_0|inner|trim|how": "auto"},
    {"steps": [{"inner": {"trim": {"how": "none"}}}, {"inner": {"trim": {"how": "fixed", "length": 5}}}]},
])
def test_requests_galaxy_runs_are_accepted(models, inputs):
    _, completed = models
    relaxed = create_field_model(completed, "t_relaxed", "relaxed_request")
    assert model_problems(inputs, completed, relaxed, "inputs", "Tool 't'")[2] == []


def test_values_that_are_no_option_and_parameters_of_an_empty_branch_are_still_refused(models):
    _, completed = models
    relaxed = create_field_model(completed, "t_relaxed", "relaxed_request")
    inputs = {"steps": [{"inner": {"trim": {"how": "manual"}}}], "stats": {"report": False, "bins": 3}}
    problems = model_problems(inputs, completed, relaxed, "inputs", "Tool 't'")[2]
    assert sorted((problem.path, problem.rule) for problem in problems) == [
        ("inputs.stats.bins", "unselected_branch"), ("inputs.steps[0].inner.trim.how", "not_an_option")]


def test_galaxys_written_model_alone_refuses_them(models):
    """Why the completion exists: without it the preflight refused what Galaxy runs."""
    written, _ = models
    relaxed = create_field_model(written, "t_written", "relaxed_request")
    problems = model_problems({"stats": {"report": False}}, written, relaxed, "inputs", "Tool 't'")[2]
    assert [problem.path for problem in problems] == ["inputs.stats.report"]
