"""The patch that lets the preflight's bundles reuse the strict request model built once per tool."""

import functools
import inspect

from galaxy_mcp_analysis.activation.built_server import WRAPPED_MARK
from galaxy_mcp_analysis.core.settings import Settings


def check_request_model() -> str | None:
    from galaxy.tool_util.parameters import convert
    from galaxy.tool_util.parameters.state import (
        RequestToolState,
        ToolState,
    )
    from galaxy.tool_util_models.parameters import ToolParameterBundleModel

    method = inspect.getattr_static(RequestToolState, "_parameter_model_for", None)
    if not isinstance(method, classmethod):
        return "RequestToolState._parameter_model_for is no longer a classmethod"
    if "RequestToolState" not in convert.strictify.__code__.co_names:
        return "strictify no longer validates through RequestToolState"
    if "parameter_model_for" not in ToolState.validate.__code__.co_names:
        return "ToolState.validate no longer asks parameter_model_for for its model"
    if "_parameter_model_for" not in inspect.unwrap(ToolState.parameter_model_for.__func__).__code__.co_names:
        return "ToolState.parameter_model_for no longer builds through _parameter_model_for"
    model = RequestToolState.parameter_model_for(ToolParameterBundleModel(parameters=[]))
    if not (isinstance(model, type) and hasattr(model, "model_validate")):
        return "RequestToolState.parameter_model_for no longer answers a pydantic model"
    return None


def apply_request_model(settings: Settings) -> None:
    from galaxy.tool_util.parameters.state import RequestToolState

    from galaxy_mcp_analysis.operations.request_models import ModelledBundle

    original = inspect.getattr_static(RequestToolState, "_parameter_model_for").__func__
    if getattr(original, WRAPPED_MARK, False):
        return

    @functools.wraps(original)
    def _parameter_model_for(cls, parameters, name=None):
        # Only the preflight's bundles carry a model; it is the one Galaxy would build from the
        # same parameters (same representation, "request"), built once when the tool was modelled.
        if name is None and isinstance(parameters, ModelledBundle) and parameters.request_model is not None:
            return parameters.request_model
        return original(cls, parameters, name)

    setattr(_parameter_model_for, WRAPPED_MARK, True)
    RequestToolState._parameter_model_for = classmethod(_parameter_model_for)
