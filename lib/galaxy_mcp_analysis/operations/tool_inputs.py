"""Tool inputs an agent gets right the first time: schemas, the preflight, dry runs.

Everything here reads Galaxy's own typed model of a tool's parameters (``tool.parameters``,
``galaxy.tool_util_models.parameters``) and validates with Galaxy's request model
(``RelaxedRequestToolState``, then ``strictify``), as ``JobsService.create`` does. The
compact JSON Schema is a rendering of that model (``core.tool_schema``), not a second one.
The value forms Galaxy's legacy tool API accepts are normalised first (``core.tool_inputs``);
what is left is refused with its path (``core.tool_input_problems``), in one
``[VALIDATION_ERROR]``, before anything is queued.
"""

import copy
import threading
import weakref
from collections.abc import (
    Collection,
    Mapping,
)
from dataclasses import (
    dataclass,
    field,
)
from typing import Any

from galaxy import exceptions
from galaxy.tool_util.parameters import (
    fill_static_defaults,
    RelaxedRequestToolState,
    strictify,
)
from galaxy.tool_util_models.parameters import create_field_model
from pydantic import ValidationError

from galaxy_mcp_analysis.core import (
    tool_inputs as rules,
    tool_schema,
)
from galaxy_mcp_analysis.core.datatypes import datatype_fits
from galaxy_mcp_analysis.core.input_problems import (
    InputProblem,
    MISSING_REQUIRED,
    problems_error,
    WRONG_TYPE,
)
from galaxy_mcp_analysis.core.map_over import plan_map_over
from galaxy_mcp_analysis.core.populated_values import as_read
from galaxy_mcp_analysis.core.tool_input_problems import (
    collection_type_problem,
    datatype_problem,
    model_problems,
    problems_from_validation,
)
from galaxy_mcp_analysis.operations.collection_types import collection_verdict
from galaxy_mcp_analysis.operations.declared_inputs import data_inputs
from galaxy_mcp_analysis.operations.dynamic_options import dotted
from galaxy_mcp_analysis.operations.galaxy_reading import read_as_galaxy
from galaxy_mcp_analysis.operations.lookup import or_none
from galaxy_mcp_analysis.operations.request_handling import GalaxyJudge
from galaxy_mcp_analysis.operations.request_models import ModelledBundle
from galaxy_mcp_analysis.operations.tool_models import modelled_parameters

#: The extension of an upload whose datatype Galaxy has not detected yet.
PENDING_EXTENSION = "auto"


@dataclass
class ModelledTool:
    """What is computed once per loaded tool (id and version) and kept until the toolbox reloads."""

    parameters: list
    bundle: Any
    relaxed_model: Any
    request_model: Any
    schema: dict[str, Any]
    template: dict[str, Any]
    data_inputs: list[dict[str, Any]]
    dynamic_selects: list[tuple[str, ...]] = field(default_factory=list)


#: (tool id, version) -> (weak reference to the loaded Tool, ModelledTool). A toolbox reload
#: loads new Tool objects, so an entry whose tool is gone or replaced is stale.
_CACHE: dict[tuple[str, str], tuple[Any, ModelledTool]] = {}
_CACHE_LOCK = threading.Lock()


#: Why an unmodelled tool's inputs go to Galaxy unchecked.
UNMODELLED = "Galaxy's typed parameter model cannot describe this tool, so its inputs were not checked."


@dataclass
class Preflight:
    """The outcome of checking one run_tool request."""

    modelled: bool
    problems: list[InputProblem]
    #: The nested state, normalised (legacy batch wrappers kept), and the flat form sent to Galaxy.
    state: dict[str, Any] = field(default_factory=dict)
    flat: dict[str, Any] = field(default_factory=dict)
    #: Bare collections wrapped into the batch form: [{input, collection_id}].
    mapped_over: list[dict[str, Any]] = field(default_factory=list)
    resolved: dict[str, Any] | None = None
    jobs_expected: int = 1
    map_over: list[dict[str, Any]] = field(default_factory=list)
    reason: str | None = None
    #: Values sent in another form than given, with the same meaning to Galaxy: [{path, given, sent}].
    normalised: list[dict[str, Any]] = field(default_factory=list)
    #: Parameters passed to Galaxy unjudged: [{path, reason}].
    unchecked: list[dict[str, str]] = field(default_factory=list)
    #: Values the typed model refused and Galaxy's request handling runs as sent: [{path, model_rule, sent,
    #: galaxy_reads}].
    decided_by_galaxy: list[dict[str, Any]] = field(default_factory=list)
    #: Galaxy's population of the request, when it was asked (reused by the dry run's data checks).
    judge: Any = None
    #: Keys of a flat request that name a declared parameter Galaxy's reading does not read here (another
    #: branch's, a repeat block it does not make): [{path, given, reason}].
    ignored: list[dict[str, Any]] = field(default_factory=list)


class ToolInputs:
    """Operations mixin of AnalysisOperationsManager (needs its ``app``, ``trans`` and managers)."""

    # ---- The model of one tool -----------------------------------------------------------------

    def _modelled(self, tool) -> ModelledTool | None:
        """The tool's model and its renderings, cached per tool id and version; None when Galaxy cannot model it."""
        if tool.parameters is None:
            return None
        key = (tool.id, tool.version)
        with _CACHE_LOCK:
            cached = _CACHE.get(key)
            if cached is not None and cached[0]() is tool:
                return cached[1]
        # Galaxy's model with the empty branches its tool loader makes and, on 26.1.0 and 26.1.1, the
        # data inputs' declared formats (operations.tool_models).
        parameters = modelled_parameters(tool.parameters, tool.tool_source)
        request_model = create_field_model(parameters, f"{tool.id}_request", "request")
        modelled = ModelledTool(
            parameters=parameters,
            bundle=ModelledBundle.of(parameters, request_model),
            relaxed_model=create_field_model(parameters, f"{tool.id}_relaxed", "relaxed_request"),
            request_model=request_model,
            schema=tool_schema.object_schema(parameters, top=True),
            template=tool_schema.template(parameters),
            data_inputs=list(tool_schema.data_inputs(parameters)),
            dynamic_selects=list(tool_schema.dynamic_selects(parameters)),
        )
        with _CACHE_LOCK:
            _CACHE[key] = (weakref.ref(tool), modelled)
        return modelled

    # ---- get_tool_input_schema -------------------------------------------------------------------

    def get_tool_input_schema(
        self, tool_id: str, tool_version: str | None = None, history_id: str | None = None
    ) -> dict[str, Any]:
        tool = self.lookup.tool(tool_id, tool_version)
        if history_id is not None:
            self.lookup.history(history_id)
        modelled = self._modelled(tool)
        answer: dict[str, Any] = {"tool_id": tool.id, "tool_version": tool.version, "name": tool.name}
        if modelled is None:
            return answer | {
                "modelled": False,
                "reason": "Galaxy's typed parameter model cannot describe this tool's inputs.",
                "schema": {"type": "object"},
                "template": {},
                "data_inputs": [],
                "note": "run_tool sends these inputs to Galaxy unchecked; get_tool_details(tool_id, io_details=True) "
                "lists the parameters.",
            }
        schema = modelled.schema
        if modelled.dynamic_selects:
            schema = copy.deepcopy(schema)
            for names in modelled.dynamic_selects:
                options = self.dynamic_options(tool, names)
                if options is not None:
                    tool_schema.at(schema, names).update(tool_schema.enum_schema(options))
        return answer | {
            "modelled": True,
            "schema": schema,
            "template": copy.deepcopy(modelled.template),
            "data_inputs": copy.deepcopy(modelled.data_inputs),
            "forms": "run_tool takes this nested form or Galaxy's flat 'cond|param' / 'rep_0|param' keys; "
            'map a collection over a dataset input with {"batch": true, "values": [{"src": "hdca", "id": ...}]}.',
        }

    # ---- The checks ---------------------------------------------------------------------------------

    def tool_state_problems(
        self,
        tool_id: str,
        tool_version: str | None,
        state: dict,
        path: str,
        *,
        partial: bool = False,
        connected: Collection[str] = (),
    ) -> list[InputProblem]:
        """The problems of a tool state (nested or flat), each path prefixed with ``path``: run_tool's checks.

        ``partial``: missing required parameters are not problems (workflow step overrides).
        ``connected``: data-input paths (flat ``a|b`` or dotted) fed by connections; they count as present.
        """
        tool = self.lookup.tool(tool_id, tool_version)
        modelled = self._modelled(tool)
        if modelled is None:
            return []
        return self._state_problems(tool, modelled, state, path, partial=partial, connected=connected)[1]

    def _state_problems(
        self,
        tool,
        modelled: ModelledTool,
        inputs: Mapping[str, Any],
        path: str,
        *,
        partial: bool = False,
        connected: Collection[str] = (),
        unchecked: list[dict[str, str]] | None = None,
    ) -> tuple[dict[str, Any], list[InputProblem], dict[str, Any]]:
        """``(normalised nested state, problems, passed-through keys)``; what is left to Galaxy goes to
        ``unchecked``."""
        if not isinstance(inputs, Mapping):
            problem = InputProblem(
                path, WRONG_TYPE, "inputs must be an object of parameter names to values.",
                "Start from get_tool_input_schema's template.",
            )
            return {}, [problem], {}
        state, passed, problems = model_problems(
            inputs, modelled.parameters, modelled.relaxed_model, path, f"Tool {tool.id!r}"
        )
        problems += self.dynamic_select_problems(tool, modelled, state, path, unchecked)
        skipped = {dotted(path, name) for name in connected}
        problems = [
            problem
            for problem in problems
            if problem.path not in skipped and not (partial and problem.rule == MISSING_REQUIRED)
        ]
        return state, problems, passed

    def preflight(self, tool, inputs: Mapping[str, Any], *, raise_problems: bool, history=None) -> Preflight:
        """run_tool's check of ``inputs``, bare collections on dataset inputs wrapped first; also the dry run's.

        With ``history`` (the caller's, where the run would go), a value Galaxy's typed model refuses is
        judged by Galaxy's own request handling (``operations.request_handling``): let through when Galaxy
        would run it exactly as sent, and named in ``decided_by_galaxy``."""
        modelled = self._modelled(tool)
        if modelled is None or not isinstance(inputs, Mapping):
            plan = plan_map_over(data_inputs(tool.inputs), dict(inputs) if isinstance(inputs, Mapping) else {})
            return Preflight(
                modelled=False,
                problems=[],
                flat=plan.inputs,
                mapped_over=plan.mapped_over,
                reason=UNMODELLED,
                unchecked=[{"path": "inputs", "reason": UNMODELLED}],
            )
        nested, passed, early = rules.flat_to_nested(inputs, modelled.parameters, "inputs")
        ignored: list[dict[str, Any]] = []
        if not early and history is not None and rules.has_flat_keys(inputs):
            nested, passed, early, ignored = self._read_as_galaxy(tool, modelled, inputs, history, (nested, passed))
        nested, defaulted = rules.null_booleans_defaulted(nested, modelled.parameters, getattr(tool, "profile", None))
        plan = plan_map_over(data_inputs(tool.inputs), rules.nested_to_flat(nested, modelled.parameters) | passed)
        unchecked: list[dict[str, str]] = []
        state, problems, passed = self._state_problems(tool, modelled, plan.inputs, "inputs", unchecked=unchecked)
        problems = early + problems
        resolved, judge, decided = None, None, []
        if not problems:
            resolved, problems = self._resolved(tool, modelled, state)
        if problems and history is not None:  # Galaxy's own request handling judges what its typed model refuses
            judge = GalaxyJudge(
                self.trans, tool, history, lambda: rules.nested_to_flat(state, modelled.parameters) | passed
            )
            problems, decided, judged = self._judged(judge, tool, modelled, problems, state)
            resolved = judged if decided else resolved
        problems += self._data_problems(modelled, state)
        map_over: list[dict[str, Any]] = []
        jobs = 1
        if not problems:
            map_over, jobs = self._map_over(modelled, state)
        if problems and raise_problems:
            raise problems_error(problems, f"Tool {tool.id!r} ({tool.version}) cannot run with these inputs")
        flat = rules.nested_to_flat(state, modelled.parameters) | passed
        normalised = rules.column_labels(nested, modelled.parameters) + defaulted
        return Preflight(True, problems, state, flat, plan.mapped_over, resolved, jobs, map_over,
                         normalised=normalised, unchecked=unchecked, decided_by_galaxy=decided, judge=judge,
                         ignored=ignored)

    def _read_as_galaxy(self, tool, modelled: ModelledTool, inputs: Mapping[str, Any], history, read_by_name):
        """A flat request as Galaxy's own reading takes it (``operations.galaxy_reading``): ``(nested, passed,
        problems, ignored)``; names the tool declares nowhere stay in, for the model to refuse."""
        given = {key: value for key, value in inputs.items() if isinstance(key, str) and not rules.is_pass_through(key)}
        read = read_as_galaxy(self.trans, tool, history, rules.nested_to_flat(given, modelled.parameters))
        if read is None:
            return (*read_by_name, [], [])
        kept, undeclared, ignored = read
        nested, _, early = rules.flat_to_nested(kept | undeclared, modelled.parameters, "inputs")
        return nested, read_by_name[1], early, ignored

    def _resolved(self, tool, modelled: ModelledTool, state: dict) -> tuple[dict | None, list[InputProblem]]:
        """What Galaxy would run: the strict request with every static default filled in."""
        bundle = modelled.bundle
        form = rules.request_form(state, modelled.parameters)
        try:
            strict = strictify(RelaxedRequestToolState(copy.deepcopy(form)), bundle)
        except exceptions.MessageException:
            try:
                modelled.request_model(**form)
            except ValidationError as error:
                return None, problems_from_validation(
                    error.errors(), modelled.parameters, state, "inputs", f"Tool {tool.id!r}"
                )
            return None, []
        except Exception:  # strictify refuses a conditional value the relaxed model let through
            return None, []
        resolved = fill_static_defaults(copy.deepcopy(strict.input_state), bundle, tool.profile)
        return rules.legacy_batches(resolved, modelled.parameters), []

    def _judged(self, judge, tool, modelled: ModelledTool, problems: list[InputProblem], state: dict):
        """``(problems left, decided_by_galaxy, resolved)`` once Galaxy's request handling has judged ``problems``.

        A value Galaxy runs as sent is let through only if Galaxy's own reading of it is a value its typed
        model takes too (relaxed and strict): what Galaxy's legacy population lets through unchecked (a colour
        that is no colour) stays refused, as before."""
        left, decided = judge.overrule(problems, state)
        if not decided:
            return problems, [], None
        read = as_read(state, decided)
        again = self._state_problems(tool, modelled, read, "inputs")[1]
        resolved = None
        if not again:
            resolved, again = self._resolved(tool, modelled, read)
        refused = {problem.path for problem in again}
        original = {problem.path: problem for problem in problems}
        left += [original[entry["path"]] for entry in decided if entry["path"] in refused]
        known = {problem.path for problem in left}
        left += [problem for problem in again if problem.path not in known and problem.path not in original]
        decided = [entry for entry in decided if entry["path"] not in refused]
        return left, decided, resolved if not left else None

    # ---- Datasets and collections -------------------------------------------------------------------

    def _data_problems(self, modelled: ModelledTool, state: dict) -> list[InputProblem]:
        problems: list[InputProblem] = []
        registry = self.app.datatypes_registry
        for path, parameter, reference in rules.data_values(state, modelled.parameters):
            item = self.referenced_item(reference)
            if item is None:
                continue
            if parameter.parameter_type == rules.DATA:
                accepted = list(parameter.extensions)
                if "data" in accepted:
                    continue
                extensions = (
                    [item.extension]
                    if reference["src"] in ("hda", "ldda")
                    else sorted(item.dataset_dbkeys_and_extensions_summary[1])
                    if reference["src"] == "hdca"
                    else []
                )
                for extension in extensions:
                    # 'auto': an upload whose datatype Galaxy detects when it ends. Galaxy takes the request now
                    # and the job waits for the upload (make serve-production: a pasted list mapped over at once
                    # was refused here, then run by Galaxy's /api/tools): only the detected type can be judged.
                    if extension == PENDING_EXTENSION:
                        continue
                    if not datatype_fits(registry, extension, accepted):
                        problems.append(datatype_problem(path, parameter, extension, accepted))
                        break
            elif parameter.parameter_type == rules.COLLECTION and reference["src"] == "hdca":
                accepted_types = tool_schema.collection_types(parameter)
                actual = item.collection.collection_type
                if accepted_types and not any(collection_verdict(actual, wanted) != "refuse" for wanted in accepted_types):
                    problems.append(collection_type_problem(path, parameter, actual, accepted_types))
        return problems

    def referenced_item(self, reference: Mapping[str, Any]):
        """The HDA, LDDA or HDCA a reference names (run_tool checked access before), or None."""
        return or_none(lambda: self.lookup.item(reference["src"], reference["id"]))

    def _map_over(self, modelled: ModelledTool, state: dict) -> tuple[list[dict[str, Any]], int]:
        """One entry per input given in batch form, and how many jobs Galaxy will create."""
        entries = []
        counts = []
        linked_all = True
        for path, parameter, value in rules.batch_values(state, modelled.parameters):
            linked_all = linked_all and value.get("linked", True) is not False
            size = 0
            for reference in value.get("values") or []:
                item = self.referenced_item(reference) if isinstance(reference, Mapping) else None
                if item is None:
                    size += 1
                    continue
                if reference.get("src") == "hdca":
                    size += _mapped_size(item.collection, parameter)
                    entries.append(
                        {
                            "input": path,
                            "collection_id": reference["id"],
                            "collection_type": item.collection.collection_type,
                            "jobs": _mapped_size(item.collection, parameter),
                        }
                    )
                else:
                    size += 1
            counts.append(size)
        if not counts:
            return entries, 1
        if linked_all:
            return entries, max(counts)
        product = 1
        for count in counts:
            product *= count
        return entries, product


def _mapped_size(collection, parameter) -> int:
    """Jobs from mapping this collection over the input: one per dataset, or per matching subcollection."""
    if parameter.parameter_type == rules.COLLECTION:
        wanted = tool_schema.collection_types(parameter)
        depth = collection.collection_type.count(":") + 1
        wanted_depth = min((w.count(":") + 1 for w in wanted), default=depth)
        levels = max(depth - wanted_depth, 0)
        elements = [collection]
        for _ in range(levels):
            elements = [e.child_collection for c in elements for e in c.elements]
        return sum(len(c.elements) for c in elements) if levels else 1
    return len(collection.dataset_instances)
