"""Each input value of an invocation judged by Galaxy's model: a parameter input by its runtime parameter;
a dataset or collection by access, collection type (taken whole, mapped over, or refused) and datatype.
"""

from typing import Any

from galaxy import exceptions
from galaxy.model import HistoryDatasetCollectionAssociation
from galaxy.workflow.modules import WorkflowModuleInjector

from galaxy_mcp_analysis.core.datatypes import datatype_fits
from galaxy_mcp_analysis.core.errors import (
    AnalysisError,
    ErrorCode,
)
from galaxy_mcp_analysis.core.input_problems import (
    COLLECTION_TYPE_NOT_ACCEPTED,
    DATATYPE_NOT_ACCEPTED,
    InputProblem,
    INVALID_VALUE,
    listed,
    WRONG_TYPE,
)
from galaxy_mcp_analysis.operations.collection_types import collection_verdict
from galaxy_mcp_analysis.operations.workflows.common import (
    _listify,
    _option_value,
)


#: Data sources Galaxy's invocation request accepts for dataset and collection inputs.
#: The `src` values a workflow invocation input takes (Galaxy's invocation request; not a tool request's).
INVOCATION_DATA_SOURCES = ("hda", "ldda", "ld", "url")
INVOCATION_COLLECTION_SOURCES = ("hdca",)


class WorkflowInputChecks:
    """The problems of one workflow input's value, a mixin of ``Workflows``."""

    def parameter_input_problems(self, step, value, path: str) -> list[InputProblem]:
        """A value for a parameter input, checked by the input step's own runtime parameter."""
        if isinstance(value, dict):
            return [
                InputProblem(
                    path,
                    WRONG_TYPE,
                    f"Parameter input {step.effective_label!r} takes its value directly, not an object.",
                    f"Pass the value itself, e.g. inputs[{step.effective_label!r}] = 5.",
                )
            ]
        WorkflowModuleInjector(self.trans, False).inject(step)
        parameter = step.module.get_runtime_inputs(step.module)["input"]
        state = step.tool_inputs or {}
        options = [_option_value(option) for option in state.get("restrictions") or []]
        try:
            converted = parameter.from_json(value, self.trans, {})
            parameter.validate(converted, trans=self.trans)
        except (ValueError, exceptions.MessageException) as e:
            message = getattr(e, "message_suffix", None) or str(e)
            rule = WRONG_TYPE if state.get("parameter_type") in ("integer", "float", "boolean") else INVALID_VALUE
            return [
                InputProblem(
                    path,
                    rule,
                    f"{value!r} is not a valid {state.get('parameter_type', 'text')} "
                    f"for {step.effective_label!r}: {message}",
                    (
                        f"Use one of: {listed(options)}."
                        if options
                        else "get_workflow_input_schema shows its type, bounds and options."
                    ),
                    tuple(options) if options else None,
                )
            ]
        return []

    def data_input_problems(self, step, value, path, name, mapped_over, map_sizes, given) -> list[InputProblem]:
        if not isinstance(value, dict) or "src" not in value:
            return [
                InputProblem(
                    path,
                    WRONG_TYPE,
                    f'Input {name!r} takes {{"src": ..., "id": ...}}, got {_short(value)}.',
                    'Pass {"src": "hda", "id": "<dataset_id>"} or {"src": "hdca", "id": "<collection_id>"}.',
                )
            ]
        src = value.get("src")
        if src not in INVOCATION_DATA_SOURCES + INVOCATION_COLLECTION_SOURCES:
            return [
                InputProblem(
                    f"{path}.src",
                    INVALID_VALUE,
                    f"src {src!r} is not a source Galaxy takes for workflow inputs.",
                    f"Use one of: {listed(list(INVOCATION_DATA_SOURCES + INVOCATION_COLLECTION_SOURCES))}.",
                    INVOCATION_DATA_SOURCES + INVOCATION_COLLECTION_SOURCES,
                )
            ]
        if src not in ("hda", "hdca"):
            return []  # library datasets and URLs: Galaxy's invocation request checks them
        item = self.input_item(src, value.get("id"), path)
        if isinstance(item, InputProblem):
            return [item]
        formats = list(_listify((step.tool_inputs or {}).get("format")))
        if step.type == "data_collection_input":
            plan = (mapped_over, map_sizes, given)
            return self._collection_input_problems(step, item, src, path, name, formats, plan)
        if src == "hdca":
            mapped_over.append({"input": name, "collection_type": item.collection.collection_type, "over": "dataset"})
            map_sizes[step.order_index] = item.collection.element_count or 0
        return self._datatype_problems(item, formats, path, name)

    def _collection_input_problems(self, step, item, src, path, name, formats, plan) -> list[InputProblem]:
        """A collection input given a dataset or a collection: Galaxy's collection-type rule, then the datatypes.
        ``plan`` is (mapped_over, map_sizes, given), filled with how Galaxy will take the collection."""
        mapped_over, map_sizes, given = plan
        accepted_type = (step.tool_inputs or {}).get("collection_type") or "list"
        if src == "hda":
            return [
                InputProblem(
                    path,
                    COLLECTION_TYPE_NOT_ACCEPTED,
                    f"Input {name!r} takes a {accepted_type} collection; a single dataset was given.",
                    f"Build a {accepted_type} collection with create_collection and pass "
                    '{"src": "hdca", "id": ...}.',
                    (accepted_type,),
                )
            ]
        given_type = item.collection.collection_type
        verdict = collection_verdict(given_type, accepted_type)
        if verdict == "refuse":
            return [
                InputProblem(
                    path,
                    COLLECTION_TYPE_NOT_ACCEPTED,
                    f"Input {name!r} takes a {accepted_type} collection; collection {item.name!r} is a "
                    f"{given_type}, which Galaxy neither accepts there nor maps over it.",
                    f"Pass a {accepted_type} collection (or one whose elements are {accepted_type} collections).",
                    (accepted_type,),
                )
            ]
        if verdict == "map_over":
            mapped_over.append({"input": name, "collection_type": given_type, "over": accepted_type})
            map_sizes[step.order_index] = item.collection.element_count or 0
        else:
            given[step.order_index] = item.collection
        return self._datatype_problems(item, formats, path, name)

    def _datatype_problems(self, item, formats: list[str], path: str, name: str) -> list[InputProblem]:
        """Galaxy's datatype rule, the one run_tool's preflight applies (core.datatypes.datatype_fits)."""
        if not formats:
            return []
        registry = self.app.datatypes_registry
        if isinstance(item, HistoryDatasetCollectionAssociation):
            extensions = sorted(item.dataset_dbkeys_and_extensions_summary[1])
        else:
            extensions = [item.extension]
        problems = []
        for extension in extensions:
            if datatype_fits(registry, extension, formats):
                continue
            problems.append(
                InputProblem(
                    path,
                    DATATYPE_NOT_ACCEPTED,
                    f"Input {name!r} accepts {listed(formats)}; {item.name!r} is {extension}, which Galaxy "
                    "cannot convert to any of them.",
                    "Pass a dataset of an accepted datatype, or change its datatype with update_dataset "
                    "if it was detected wrongly.",
                    tuple(formats),
                )
            )
        return problems

    def input_item(self, src: str, encoded: Any, path: str):
        """The caller's dataset or collection (Galaxy's managers check access), or a problem."""
        if not isinstance(encoded, str) or not encoded:
            return InputProblem(
                f"{path}.id",
                WRONG_TYPE,
                f"id must be an encoded id string, got {_short(encoded)}.",
                "Use an `id` from get_history_contents.",
            )
        try:
            return self.lookup.item(
                src,
                encoded,
                denied=f"{path}: {encoded} is not accessible to this API key's user (another user's private item).",
                denied_hint="Use your own datasets and collections, or ones shared with you.",
            )
        except AnalysisError as refused:
            if refused.code is ErrorCode.AUTHORIZATION_ERROR:
                raise
            invalid = refused.code is ErrorCode.VALIDATION_ERROR
            return InputProblem(
                f"{path}.id",
                INVALID_VALUE,
                f"{encoded!r} is not an encoded id." if invalid else refused.message,
                "Use an `id` from get_history_contents.",
            )


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
