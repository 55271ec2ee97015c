"""The tool-request-model patch: strictify on the preflight's bundle validates with the model built once,
and gives what it gives with Galaxy's own bundle (the same strict state, the same refusal).

The parameters are Galaxy's own (``input_models_for_tool_source`` on a small tool XML).
"""

import pytest
from galaxy import exceptions
from galaxy.tool_util.parameters import (
    input_models_for_tool_source,
    RelaxedRequestToolState,
    strictify,
    ToolParameterBundleModel,
)
from galaxy.tool_util.parameters.state import RequestToolState
from galaxy.tool_util_models.parameters import create_field_model

from galaxy_mcp_analysis.activation.request_models import (
    apply_request_model,
    check_request_model,
)
from galaxy_mcp_analysis.core.settings import Settings
from galaxy_mcp_analysis.operations.request_models import ModelledBundle

from tool_xml import tool_source_of  # this folder is on sys.path (pytest, no package)

TOOL = """<tool id="t" name="t" version="1.0" profile="24.2">
  <command>true</command>
  <inputs>
    <param name="title" type="text" optional="false"/>
    <param name="count" type="integer" value="3" min="1"/>
    <conditional name="mode">
      <param name="how" type="select">
        <option value="fast">fast</option>
        <option value="exact">exact</option>
      </param>
      <when value="fast"/>
      <when value="exact"><param name="tolerance" type="float" value="0.5"/></when>
    </conditional>
  </inputs>
  <outputs><data name="out" format="txt"/></outputs>
</tool>
"""


@pytest.fixture(scope="module")
def parameters(tmp_path_factory):
    return input_models_for_tool_source(tool_source_of(tmp_path_factory, TOOL)).parameters


@pytest.fixture(scope="module", autouse=True)
def applied():
    assert check_request_model() is None
    apply_request_model(Settings())
    apply_request_model(Settings())  # applying twice wraps once


def test_the_preflights_bundle_answers_its_own_model_and_galaxys_bundle_a_new_one(parameters):
    model = create_field_model(parameters, "t_request", "request")
    bundle = ModelledBundle.of(parameters, model)
    assert RequestToolState.parameter_model_for(bundle) is model
    plain = ToolParameterBundleModel(parameters=parameters)
    first, second = RequestToolState.parameter_model_for(plain), RequestToolState.parameter_model_for(plain)
    assert first is not model and first is not second  # Galaxy's own bundles are modelled as before


@pytest.mark.parametrize("state", [
    {"count": 5, "mode": {"how": "exact", "tolerance": 0.1}},
    {"title": "x", "mode": {"how": "fast"}},
    {},
])
def test_strictify_gives_the_same_state_with_either_bundle(parameters, state):
    bundle = ModelledBundle.of(parameters, create_field_model(parameters, "t_request", "request"))
    plain = ToolParameterBundleModel(parameters=parameters)
    assert strictify(RelaxedRequestToolState(state), bundle).input_state == \
        strictify(RelaxedRequestToolState(state), plain).input_state


def test_strictify_refuses_what_it_refuses_with_galaxys_bundle(parameters):
    bundle = ModelledBundle.of(parameters, create_field_model(parameters, "t_request", "request"))
    plain = ToolParameterBundleModel(parameters=parameters)
    state = {"count": "many"}
    refusals = []
    for used in (bundle, plain):
        with pytest.raises(exceptions.MessageException) as refused:
            strictify(RelaxedRequestToolState(state), used)
        refusals.append(type(refused.value))
    assert refusals[0] is refusals[1]


def test_the_wrapper_is_galaxys_method_with_the_cache_in_front():
    wrapped = RequestToolState.__dict__["_parameter_model_for"].__func__
    assert wrapped.__wrapped__.__qualname__.endswith("RequestToolState._parameter_model_for")
