"""A tool's parameter bundle that carries its strict request model, built once per tool.

Galaxy's ``strictify`` validates every request against ``RequestToolState``'s model of the
bundle it is given, and builds that pydantic model anew on each call (about 5 ms for sort1,
the largest share of the preflight's own time). The ``tool-request-model`` patch
(``activation.request_models``) lets a ``ModelledBundle`` answer with the model the preflight
built when it first modelled the tool; every other bundle, Galaxy's own included, is modelled
as before.
"""

from typing import Any

from galaxy.tool_util_models.parameters import ToolParameterBundleModel
from pydantic import PrivateAttr


class ModelledBundle(ToolParameterBundleModel):
    """Galaxy's bundle of a tool's parameters, with the request model built from the same parameters."""

    _request_model: Any = PrivateAttr(default=None)

    @classmethod
    def of(cls, parameters: list, request_model: Any) -> "ModelledBundle":
        bundle = cls(parameters=parameters)
        bundle._request_model = request_model
        return bundle

    @property
    def request_model(self) -> Any:
        return self._request_model
