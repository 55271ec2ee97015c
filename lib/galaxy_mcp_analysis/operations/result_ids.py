"""Ids in every stock tool's result mean what their names say (the rules: ``core.result_ids``), and
its datasets claim nothing that belongs to another object (``core.dataset_views``).

Galaxy's AgentOperationsManager passes every result through ``_encode_ids_in_response``; this
mixin wraps it, so stock tools and ours that reuse their results are covered in one place.
"""

from typing import Any

from galaxy.model import Workflow
from pydantic import (
    BaseModel,
    TypeAdapter,
)

from galaxy_mcp_analysis.core.dataset_views import honest_dataset_views
from galaxy_mcp_analysis.core.result_ids import without_internal_ids

#: How FastMCP turns a tool's result into JSON (a model nested in a dict[str, Any] result).
_AS_JSON = TypeAdapter(Any)


class ResultIds:
    #: Nesting of _encode_ids_in_response calls in progress: Galaxy's encoder recurses through
    #: ``self._encode_ids_in_response``, which is this method again for every nested list and dict.
    _encoding_depth = 0

    def _encode_ids_in_response(self, data: Any) -> Any:
        if self._encoding_depth:  # a nested value: only Galaxy's encoding; ours runs once, on the whole result
            return super()._encode_ids_in_response(data)
        self._encoding_depth += 1
        try:
            encoded = super()._encode_ids_in_response(data)
        finally:
            self._encoding_depth -= 1
        # Once only: a version id mapped to its stored workflow's id must not be mapped again as a version id
        # (in a listing, each row was, until this guard, which a fresh database hid by ids that coincide).
        return honest_dataset_views(without_internal_ids(self._with_stored_workflow_ids(encoded)))

    def _with_stored_workflow_ids(self, data: Any) -> Any:
        """An invocation's ``workflow_id`` is, in Galaxy's view, the id of the workflow *version* it ran;
        every tool takes the stored workflow's id, which differs once a workflow has two versions."""
        if isinstance(data, list):
            return [self._with_stored_workflow_ids(item) for item in data]
        if isinstance(data, BaseModel) and getattr(getattr(data, "root", data), "model_class", None) == (
            "WorkflowInvocation"
        ):  # Galaxy's WorkflowInvocationResponse, a root model around the view
            data = _AS_JSON.dump_python(data, mode="json")
        if not isinstance(data, dict):
            return data
        if data.get("model_class") != "WorkflowInvocation":  # e.g. a listing: {"invocations": [...], "count": ...}
            return {key: self._with_stored_workflow_ids(value) if isinstance(value, list | dict | BaseModel) else value
                    for key, value in data.items()}
        security = self.trans.security
        version_id = security.decode_id(str(data.get("workflow_id")))
        stored_id = self.lookup.stored_workflow_ids.get(version_id)
        if stored_id is None:  # a version this call did not find itself
            version = self.trans.sa_session.get(Workflow, version_id)
            stored_id = version.stored_workflow_id if version is not None else None
        if stored_id is None:
            return data
        return {**data, "workflow_id": security.encode_id(stored_id)}
