"""Workflows an agent can check, follow and write (issue 21).

Galaxy decides everything here through its own objects: the workflow manager finds
workflows and invocations the caller may see, workflow modules say what each step
takes and makes, Galaxy's datatype registry and collection-type descriptions say what
an input accepts or maps over, ``WorkflowsService`` invokes and extracts, and the
workflow contents manager (with gxformat2, in Galaxy's virtualenv) reads and writes
Format 2. Tool parameters of steps are checked by the tool-input capability
(``tool_state_problems``, issue 15); rules that need no Galaxy are in
``core.workflows``.
"""

import json
from typing import Any

import yaml
from galaxy import exceptions
from galaxy.managers.workflows import (
    RawWorkflowDescription,
    WorkflowCreateOptions,
)
from galaxy.model import (
    HistoryDatasetAssociation,
    HistoryDatasetCollectionAssociation,
    ImplicitCollectionJobs,
    Job,
    StoredWorkflow,
    Workflow,
    WorkflowInvocation,
)
from galaxy.model.dataset_collections.type_description import COLLECTION_TYPE_DESCRIPTION_FACTORY
from galaxy.schema.workflows import WorkflowExtractionByIdsPayload
from galaxy.workflow.modules import (
    module_factory,
    WorkflowModuleInjector,
)
from sqlalchemy import select

from galaxy_mcp_analysis.core.errors import (
    AnalysisError,
    ErrorCode,
)
from galaxy_mcp_analysis.core.input_problems import (
    BAD_CONNECTION,
    closest_names,
    COLLECTION_TYPE_NOT_ACCEPTED,
    DATATYPE_NOT_ACCEPTED,
    InputProblem,
    INVALID_VALUE,
    listed,
    problems_error,
    UNKNOWN_STEP,
    WRONG_TYPE,
)
from galaxy_mcp_analysis.core.workflow_steps import schema_with_saved_defaults
from galaxy_mcp_analysis.core.workflows import (
    clean_format2,
    clean_tool_state,
    GALAXY_RUNTIME_KEYS,
    INPUT_KINDS,
    not_a_tool_step_problem,
    resolve_inputs,
    resolve_step,
    StepJob,
    StepProgress,
    summarize_progress,
    unique_labels,
    WorkflowInput,
    WorkflowStepRef,
)
from galaxy_mcp_analysis.operations.workflow_steps import (
    maps_of_given_collections,
    label_steps_and_outputs,
    saved_step_values,
)

#: Jobs that only bring data in: never workflow steps.
UPLOAD_TOOLS = frozenset({"__DATA_FETCH__", "upload1", "__SET_METADATA__"})
#: Steps of one extraction (Galaxy builds them all in one request).
MAX_EXTRACTED_JOBS = 1000
#: Data sources Galaxy's invocation request accepts for dataset and collection inputs.
DATA_SOURCES = ("hda", "ldda", "ld", "url")
COLLECTION_SOURCES = ("hdca",)
#: Format 2 values standing for "connected" or "set at run time" in a tool state.
RUNTIME_VALUE_CLASSES = ("ConnectedValue", "RuntimeValue")


class Workflows:
    """Operations mixin of AnalysisOperationsManager (needs its ``app``, ``trans``, services, and the
    tool-input capability's ``get_tool_input_schema``/``tool_state_problems`` once merged)."""

    # ==== Reading a workflow's inputs ====

    def get_workflow_input_schema(
        self, workflow_id: str, version: int | None = None, history_id: str | None = None
    ) -> dict[str, Any]:
        stored, workflow = self._accessible_workflow(workflow_id, version)
        steps = _ordered_steps(workflow)
        inputs = [self._input_entry(step) for step in steps if step.type in INPUT_KINDS]
        parameters = [self._step_parameters_entry(step, history_id) for step in steps if step.type == "tool"]
        template_inputs = {entry["label"] or str(entry["step_index"]): _placeholder(entry) for entry in inputs}
        return {
            "workflow_id": workflow_id,
            "name": stored.name,
            "version": version if version is not None else len(stored.workflows) - 1,
            "inputs": inputs,
            "parameters": parameters,
            "steps": [_step_summary(step) for step in steps],
            "template": {"inputs": template_inputs, "parameters": {}},
        }

    def _input_entry(self, step) -> dict[str, Any]:
        state = step.tool_inputs or {}
        kind = INPUT_KINDS[step.type]
        entry: dict[str, Any] = {
            "label": step.effective_label,
            "step_index": step.order_index,
            "kind": kind,
            "optional": bool(step.input_optional),
        }
        if kind in ("dataset", "collection"):
            entry["datatypes"] = list(_listify(state.get("format"))) or ["data"]
        if kind == "collection":
            entry["collection_type"] = state.get("collection_type") or "list"
        if kind == "parameter":
            entry["type"] = state.get("parameter_type", "text")
            if "default" in state:
                entry["default"] = state["default"]
            for key in ("min", "max", "multiple"):
                if state.get(key) not in (None, ""):
                    entry[key] = state[key]
            if state.get("restrictions"):
                entry["options"] = [_option_value(option) for option in state["restrictions"]]
            elif state.get("suggestions"):
                entry["suggestions"] = [_option_value(option) for option in state["suggestions"]]
        if step.annotations:
            entry["annotation"] = step.annotations[0].annotation
        return entry

    def _step_parameters_entry(self, step, history_id: str | None) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "step_index": step.order_index,
            "label": step.label,
            "tool_id": step.tool_id,
            "tool_version": step.tool_version,
            "connected": sorted({connection.input_name for connection in step.input_connections}),
        }
        entry.update(self._step_tool_schema(step.tool_id, step.tool_version, history_id))
        # What the saved step runs with, and the schema's defaults set to it: never a tool default it overrides.
        values, entry["saved"] = saved_step_values(self.trans, step)
        if entry.get("schema") and values:
            entry["schema"] = schema_with_saved_defaults(entry["schema"], values)
        return entry

    def _step_tool_schema(self, tool_id: str, tool_version: str | None, history_id: str | None) -> dict[str, Any]:
        """The step's tool schema from the tool-input capability (issue 15), when present."""
        schema_of = getattr(self, "get_tool_input_schema", None)
        if schema_of is None:
            return {"schema": None, "schema_unavailable": "the tool-input capability is not installed"}
        try:
            described = schema_of(tool_id, tool_version=tool_version, history_id=history_id)
        except AnalysisError as e:
            return {"schema": None, "schema_unavailable": e.message}
        return {"schema": described.get("schema"), "modelled": described.get("modelled", True)}

    # ==== Checking and invoking ====

    def check_workflow_inputs(
        self,
        workflow_id: str,
        history_id: str,
        inputs: dict[str, Any],
        parameters: dict[str, Any] | None = None,
        version: int | None = None,
    ) -> dict[str, Any]:
        _, workflow = self._accessible_workflow(workflow_id, version)
        self._history(history_id, write=False, own=True)
        plan = self._preflight(workflow, inputs or {}, parameters or {}, history_id)
        by_index = {step.order_index: step for step in workflow.steps}
        for entry in plan["steps"]:
            if entry.get("tool_id"):
                entry["saved"] = saved_step_values(self.trans, by_index[entry["step_index"]])[1]
        return {
            "valid": not plan["problems"],
            "errors": [problem.as_dict() for problem in plan["problems"]],
            "resolved_inputs": plan["resolved_inputs"],
            "defaulted_inputs": plan["defaulted_inputs"],
            "inputs_by": plan["inputs_by"],
            "mapped_over": plan["mapped_over"],
            "steps": plan["steps"],
        }

    def invoke_workflow(
        self,
        workflow_id: str,
        history_id: str | None = None,
        inputs: dict[str, Any] | None = None,
        parameters: dict[str, Any] | None = None,
        history_name: str | None = None,
    ) -> dict[str, Any]:
        """Galaxy's invocation, after every input and step parameter is checked (stock method overridden)."""
        stored, workflow = self._accessible_workflow(workflow_id, None)
        if history_id:
            self._history(history_id, write=False, own=True)
        plan = self._preflight(workflow, inputs or {}, parameters or {}, history_id)
        if plan["problems"]:
            raise problems_error(
                plan["problems"],
                f"invoke_workflow({stored.name!r})",
                nothing_done="Nothing was invoked.",
                suggestion="Fix every path listed and call again; check_workflow_inputs checks without invoking, "
                "get_workflow_input_schema shows labels, accepted types and step parameters.",
            )
        try:
            result = super().invoke_workflow(
                workflow_id, history_id, plan["galaxy_inputs"], plan["galaxy_parameters"], history_name
            )
        except exceptions.MessageException as e:
            raise _upgrade_messages_error(e, workflow) or e
        if hasattr(result, "model_dump"):  # Galaxy's WorkflowInvocationResponse, as its tool would serialise it
            result = result.model_dump(mode="json")
        result["inputs_by"] = plan["inputs_by"]
        result["mapped_over"] = plan["mapped_over"]
        result["resolved_inputs"] = plan["resolved_inputs"]
        result["defaulted_inputs"] = plan["defaulted_inputs"]
        return result

    def _preflight(
        self, workflow: Workflow, inputs: dict[str, Any], parameters: dict[str, Any], history_id: str | None
    ) -> dict[str, Any]:
        steps = _ordered_steps(workflow)
        input_steps = {step.order_index: step for step in steps if step.type in INPUT_KINDS}
        entries = [
            WorkflowInput(
                step.order_index,
                step.effective_label,
                INPUT_KINDS[step.type],
                bool(step.input_optional),
                step.get_input_default_value(_NO_DEFAULT) is not _NO_DEFAULT,
            )
            for step in input_steps.values()
        ]
        problems: list[InputProblem] = []
        if not isinstance(inputs, dict):
            problems.append(
                InputProblem(
                    "inputs",
                    WRONG_TYPE,
                    "inputs must be an object keyed by input label.",
                    "See get_workflow_input_schema's template.",
                )
            )
            inputs = {}
        resolved = resolve_inputs(inputs, entries)
        problems.extend(resolved.problems)
        mapped_over: list[dict[str, Any]] = []
        map_sizes: dict[int, int] = {}
        given: dict[int, Any] = {}  # the collection given to each collection input that takes it whole
        resolved_inputs: dict[str, Any] = {}
        galaxy_inputs: dict[str, Any] = {}
        for index, value in resolved.values.items():
            step = input_steps[index]
            path = f"inputs.{resolved.keys[index]}"
            name = step.effective_label or str(index)
            if value is None:
                continue
            if step.type == "parameter_input":
                problems.extend(self._parameter_input_problems(step, value, path))
            else:
                problems.extend(self._data_input_problems(step, value, path, name, mapped_over, map_sizes, given))
            resolved_inputs[name] = value
            galaxy_inputs[str(index)] = value
        # What Galaxy runs with for each input left out: its default, or nothing (an optional input).
        defaulted: list[str] = []
        for index, step in input_steps.items():
            if resolved.values.get(index) is None:
                default = step.get_input_default_value(_NO_DEFAULT)
                if default is not _NO_DEFAULT or step.input_optional:
                    name = step.effective_label or str(index)
                    resolved_inputs[name] = None if default is _NO_DEFAULT else default
                    defaulted.append(name)
        galaxy_parameters, step_problems = self._step_parameter_problems(steps, parameters)
        problems.extend(step_problems)
        return {
            "problems": problems,
            "inputs_by": resolved.inputs_by,
            "mapped_over": mapped_over,
            "resolved_inputs": resolved_inputs,
            "defaulted_inputs": defaulted,
            "galaxy_inputs": galaxy_inputs,
            "galaxy_parameters": galaxy_parameters,
            "steps": _expected_jobs(steps, map_sizes | maps_of_given_collections(self.trans, steps, given)),
        }

    def _parameter_input_problems(self, step, value, path: str) -> list[InputProblem]:
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

    def _data_input_problems(self, step, value, path, name, mapped_over, map_sizes, given) -> list[InputProblem]:
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
        if src not in DATA_SOURCES + COLLECTION_SOURCES:
            return [
                InputProblem(
                    f"{path}.src",
                    INVALID_VALUE,
                    f"src {src!r} is not a source Galaxy takes for workflow inputs.",
                    f"Use one of: {listed(list(DATA_SOURCES + COLLECTION_SOURCES))}.",
                    DATA_SOURCES + COLLECTION_SOURCES,
                )
            ]
        if src not in ("hda", "hdca"):
            return []  # library datasets and URLs: Galaxy's invocation request checks them
        item = self._input_item(src, value.get("id"), path)
        if isinstance(item, InputProblem):
            return [item]
        formats = list(_listify((step.tool_inputs or {}).get("format")))
        if step.type == "data_collection_input":
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
            verdict = _collection_verdict(given_type, accepted_type)
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
        if src == "hdca":
            mapped_over.append({"input": name, "collection_type": item.collection.collection_type, "over": "dataset"})
            map_sizes[step.order_index] = item.collection.element_count or 0
        return self._datatype_problems(item, formats, path, name)

    def _datatype_problems(self, item, formats: list[str], path: str, name: str) -> list[InputProblem]:
        """Galaxy's datatype rule: the dataset's type is (a subclass of) an accepted one, or converts implicitly."""
        if not formats or "data" in formats:
            return []
        registry = self.app.datatypes_registry
        accepted = [registry.get_datatype_by_extension(ext) for ext in formats]
        accepted = [datatype for datatype in accepted if datatype is not None]
        if isinstance(item, HistoryDatasetCollectionAssociation):
            extensions = sorted(item.dataset_dbkeys_and_extensions_summary[1])
        else:
            extensions = [item.extension]
        problems = []
        for extension in extensions:
            datatype = registry.get_datatype_by_extension(extension)
            if datatype is None or datatype.matches_any(accepted):
                continue
            if registry.find_conversion_destination_for_dataset_by_extensions(extension, formats)[0]:
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

    def _input_item(self, src: str, encoded: Any, path: str):
        """The caller's dataset or collection (Galaxy's managers check access), or a problem."""
        if not isinstance(encoded, str) or not encoded:
            return InputProblem(
                f"{path}.id",
                WRONG_TYPE,
                f"id must be an encoded id string, got {_short(encoded)}.",
                "Use an `id` from get_history_contents.",
            )
        try:
            decoded = self.trans.security.decode_id(encoded)
        except (exceptions.MalformedId, ValueError, TypeError):
            return InputProblem(
                f"{path}.id",
                INVALID_VALUE,
                f"{encoded!r} is not an encoded id.",
                "Use an `id` from get_history_contents.",
            )
        try:
            if src == "hda":
                return self.hda_manager.get_accessible(decoded, self.trans.user)
            return self.app.dataset_collection_manager.get_dataset_collection_instance(self.trans, "history", decoded)
        except exceptions.ObjectNotFound:
            kind = "dataset" if src == "hda" else "collection"
            return InputProblem(
                f"{path}.id",
                INVALID_VALUE,
                f"No history {kind} with id {encoded} exists.",
                "Use an `id` from get_history_contents.",
            )
        except (exceptions.ItemAccessibilityException, exceptions.ItemOwnershipException):
            raise AnalysisError(
                ErrorCode.AUTHORIZATION_ERROR,
                f"{path}: {encoded} is not accessible to this API key's user (another user's private item).",
                "Use your own datasets and collections, or ones shared with you.",
            ) from None

    def _step_parameter_problems(self, steps, parameters: Any) -> tuple[dict[str, Any], list[InputProblem]]:
        """``parameters`` keyed by step label or index -> Galaxy's step-index keys, and the problems."""
        if not isinstance(parameters, dict):
            return {}, [
                InputProblem(
                    "parameters",
                    WRONG_TYPE,
                    "parameters must be an object keyed by step label.",
                    "See get_workflow_input_schema's `parameters`.",
                )
            ]
        refs = [_step_ref(step) for step in steps]
        by_index = {step.order_index: step for step in steps}
        galaxy_parameters: dict[str, Any] = {}
        problems: list[InputProblem] = []
        for key, values in parameters.items():
            found = resolve_step(key, refs)
            if isinstance(found, InputProblem):
                problems.append(found)
                continue
            if found.type != "tool":
                problems.append(not_a_tool_step_problem(key, found))
                continue
            if not isinstance(values, dict):
                problems.append(
                    InputProblem(
                        f"parameters.{key}",
                        WRONG_TYPE,
                        f"parameters[{key!r}] must be an object of tool parameters.",
                        'e.g. {"column": 2}',
                    )
                )
                continue
            step = by_index[found.step_index]
            connected = sorted({connection.input_name for connection in step.input_connections})
            problems.extend(
                self._tool_state_problems(
                    step.tool_id, step.tool_version, values, f"parameters.{key}", partial=True, connected=connected
                )
            )
            galaxy_parameters[str(found.step_index)] = values
        return galaxy_parameters, problems

    def _tool_state_problems(
        self, tool_id: str, tool_version: str | None, state: dict, path: str, *, partial: bool, connected
    ) -> list[InputProblem]:
        """A step's tool parameters, checked as run_tool checks them (the tool-input capability, issue 15).

        Until that capability is installed no tool-parameter check runs here.
        """
        check = getattr(self, "tool_state_problems", None)
        if check is None:
            return []
        return list(check(tool_id, tool_version, state, path, partial=partial, connected=tuple(connected)))

    # ==== Following an invocation ====

    def get_invocation_details(self, invocation_id: str) -> dict[str, Any]:
        """Galaxy's invocation view plus ``progress`` (stock method overridden)."""
        details = super().get_invocation_details(invocation_id)
        invocation = self._accessible_invocation(invocation_id)
        details["progress"] = self._progress(invocation)
        return details

    def _accessible_invocation(self, invocation_id: str) -> WorkflowInvocation:
        try:
            return self.app.workflow_manager.get_invocation(
                self.trans, self.trans.security.decode_id(invocation_id), check_ownership=False, check_accessible=True
            )
        except exceptions.ObjectNotFound:
            raise AnalysisError(
                ErrorCode.NOT_FOUND,
                f"No workflow invocation with id {invocation_id} exists.",
                "Invocation ids come from invoke_workflow's `id` or get_invocations().",
            ) from None
        except (exceptions.ItemAccessibilityException, exceptions.ItemOwnershipException):
            raise AnalysisError(
                ErrorCode.AUTHORIZATION_ERROR,
                f"Invocation {invocation_id} is not accessible to this API key's user (another user's invocation).",
                "Follow your own invocations (get_invocations()).",
            ) from None

    def _progress(self, invocation: WorkflowInvocation) -> dict[str, Any]:
        encode = self.trans.security.encode_id
        by_step = {invocation_step.workflow_step_id: invocation_step for invocation_step in invocation.steps}
        progress = []
        for step in _ordered_steps(invocation.workflow):
            invocation_step = by_step.get(step.id)
            jobs = []
            outputs: dict[str, Any] = {}
            # A subworkflow step runs no job itself: its jobs are those of its own invocation.
            association = (
                invocation.get_subworkflow_invocation_association_for_step(step) if step.type == "subworkflow" else None
            )
            subworkflow = association.subworkflow_invocation if association else None  # None: not scheduled yet
            step_jobs = list(_all_jobs(subworkflow)) if subworkflow else (invocation_step.jobs if invocation_step else [])
            for job in step_jobs:
                silent = job.state == "ok" and self._judge_outputs(job).suspected_silent_failure
                jobs.append(StepJob(encode(job.id), job.state, silent))
            if invocation_step is not None:
                for output in invocation_step.output_datasets:
                    outputs[output.output_name] = {"src": "hda", "id": encode(output.dataset_id)}
                for output in invocation_step.output_dataset_collections:
                    outputs[output.output_name] = {"src": "hdca", "id": encode(output.dataset_collection_id)}
            progress.append(
                StepProgress(
                    _step_ref(step),
                    invocation_step.state if invocation_step else None,
                    jobs,
                    outputs,
                    encode(subworkflow.id) if subworkflow else None,
                    bool(subworkflow) and _still_scheduling(subworkflow),
                )
            )
        return summarize_progress(str(invocation.state), progress)

    def invocation_jobs(self, invocation_id: str) -> tuple[dict[int, str], bool]:
        """(decoded job id -> encoded id of every job the invocation has so far, whether scheduling ended);
        used by wait_for_jobs(invocation_id=...)."""
        invocation = self._accessible_invocation(invocation_id)
        self.trans.sa_session.refresh(invocation)
        jobs = {job.id: self.trans.security.encode_id(job.id) for job in _all_jobs(invocation)}
        return jobs, not _still_scheduling(invocation)

    # ==== Writing workflows ====

    def create_workflow_from_history(
        self,
        history_id: str,
        name: str,
        job_ids: list[str] | None = None,
        dataset_ids: list[str] | None = None,
        collection_ids: list[str] | None = None,
    ) -> dict[str, Any]:
        history = self._history(history_id, write=False, own=True)
        if not name or not name.strip():
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR, "name is empty.", "Name the workflow, e.g. name='Sort and count'."
            )
        jobs = self._extraction_jobs(history, job_ids)
        plain = [job for job in jobs if job.implicit_collection_jobs_association is None]
        groups = sorted(
            {
                job.implicit_collection_jobs_association.implicit_collection_jobs_id
                for job in jobs
                if job.implicit_collection_jobs_association is not None
            }
        )
        representatives = plain + [self._representative(group) for group in groups]
        if dataset_ids is None and collection_ids is None:
            datasets, collections = _consumed_not_produced(representatives, groups, self.trans.sa_session)
        else:
            datasets = [self._history_item(history, "hda", item) for item in dataset_ids or []]
            collections = [self._history_item(history, "hdca", item) for item in collection_ids or []]
        if not representatives and not datasets and not collections:
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                f"History {history_id} has no finished tool jobs to turn into workflow steps.",
                "Run tools with run_tool, wait_for_jobs, then extract; or pass job_ids.",
            )
        labels = unique_labels([item.name for item in datasets] + [item.name for item in collections])
        encode = self.trans.security.encode_id
        payload = WorkflowExtractionByIdsPayload(
            workflow_name=name,
            job_ids=[encode(job.id) for job in plain],
            implicit_collection_jobs_ids=[encode(group) for group in groups],
            hda_ids=[encode(item.id) for item in datasets],
            hdca_ids=[encode(item.id) for item in collections],
            dataset_names=labels[: len(datasets)],
            dataset_collection_names=labels[len(datasets) :],
        )
        extracted = self.workflows_service.extract_by_ids(self.trans, payload)
        stored_id = extracted.id if isinstance(extracted.id, int) else self.trans.security.decode_id(extracted.id)
        stored = self.trans.sa_session.get(StoredWorkflow, stored_id)
        self._drop_internal_parameters(stored.latest_workflow)
        if label_steps_and_outputs(stored.latest_workflow, self.app.toolbox, self.trans.user):
            self.trans.sa_session.commit()
        workflow_id = encode(stored.id)
        schema = self.get_workflow_input_schema(workflow_id)
        return {
            "workflow_id": workflow_id,
            "name": stored.name,
            "inputs": schema["inputs"],
            "steps": schema["steps"],
            "definition": self._clean_definition(stored),
            "jobs_extracted": len(jobs),
        }

    def _extraction_jobs(self, history, job_ids: list[str] | None) -> list[Job]:
        if job_ids is not None:
            jobs = []
            for encoded in job_ids:
                job = self._accessible_job(self.trans.security.decode_id(encoded), encoded)
                if job.history_id != history.id:
                    raise AnalysisError(
                        ErrorCode.VALIDATION_ERROR,
                        f"Job {encoded} ran in another history, not in {self.trans.security.encode_id(history.id)}.",
                        "Pass jobs of this history only (list_jobs(history_id=...)).",
                    )
                jobs.append(job)
            return sorted(jobs, key=lambda job: job.id)
        statement = (
            select(Job)
            .where(Job.history_id == history.id, Job.state == "ok", Job.tool_id.not_in(UPLOAD_TOOLS))
            .order_by(Job.id)
            .limit(MAX_EXTRACTED_JOBS + 1)
        )
        jobs = list(self.trans.sa_session.scalars(statement))
        if len(jobs) > MAX_EXTRACTED_JOBS:
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                f"History has over {MAX_EXTRACTED_JOBS} finished tool jobs; one extraction takes at most that many.",
                "Pass job_ids of the jobs to keep (list_jobs(history_id=...)).",
            )
        return jobs

    def _representative(self, group_id: int) -> Job:
        return self.trans.sa_session.get(ImplicitCollectionJobs, group_id).representative_job

    def _history_item(self, history, src: str, encoded: str):
        item = self._input_item(src, encoded, f"{'dataset_ids' if src == 'hda' else 'collection_ids'}[{encoded}]")
        if isinstance(item, InputProblem):
            raise problems_error([item], "create_workflow_from_history", nothing_done="No workflow was created.")
        if item.history_id != history.id:
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                f"{encoded} ({item.name!r}) is not in history {self.trans.security.encode_id(history.id)}.",
                "Name items of the history being extracted (get_history_contents).",
            )
        return item

    def _drop_internal_parameters(self, workflow: Workflow) -> None:
        """Job bookkeeping Galaxy copies into extracted steps (invocation uuids, chromInfo paths...)."""
        changed = False
        for step in workflow.steps:
            if step.type != "tool" or not step.tool_inputs:
                continue
            names = self._tool_parameter_names(step.tool_id, step.tool_version)
            cleaned = clean_tool_state(step.tool_inputs, names, "", [])
            if cleaned != step.tool_inputs:
                step.tool_inputs = cleaned
                changed = True
        if changed:
            self.trans.sa_session.commit()

    def _tool_parameter_names(self, tool_id: str, tool_version: str | None) -> set[str] | None:
        tool = self.app.toolbox.get_tool(tool_id, tool_version, user=self.trans.user)
        return set(tool.inputs) if tool is not None else None

    def _clean_definition(self, stored: StoredWorkflow) -> dict[str, Any]:
        native = self.app.workflow_contents_manager.workflow_to_dict(self.trans, stored, style="format2")
        config = self.app.config
        server_paths = [
            str(path)
            for path in (
                getattr(config, "data_dir", None),
                getattr(config, "file_path", None),
                getattr(config, "tool_data_path", None),
                getattr(config, "job_working_directory", None),
                getattr(config, "new_file_path", None),
                getattr(config, "root", None),
            )
            if path
        ]
        cleaned = clean_format2(native, self._tool_parameter_names, server_paths)
        definition = cleaned.definition
        definition.pop("uuid", None)
        return definition

    def create_workflow(self, definition: Any, name: str | None = None, dry_run: bool = False) -> dict[str, Any]:
        as_dict = _parse_definition(definition)
        if name:
            as_dict["name"] = name
            if as_dict.get("class") == "GalaxyWorkflow":
                as_dict["label"] = name
        format2_steps = _format2_steps(as_dict)
        try:
            raw = self.app.workflow_contents_manager.normalize_workflow_format(self.trans, as_dict)
        except (exceptions.MessageException, ValueError, KeyError, TypeError, AttributeError) as e:
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                f"definition is not a workflow Galaxy can read: {str(e)[:300]}",
                "Send a Format 2 document (class: GalaxyWorkflow, inputs, steps with tool_id, in and state) "
                "or a native .ga object; create_workflow_from_history returns one to start from.",
            ) from None
        native = raw.as_dict
        if "name" not in native or not native.get("name"):
            native["name"] = name or as_dict.get("label") or "Unnamed workflow"
        problems, steps, inputs = self._definition_problems(native, format2_steps)
        if dry_run:
            return {"valid": not problems, "errors": [p.as_dict() for p in problems], "inputs": inputs, "steps": steps}
        if problems:
            raise problems_error(
                problems,
                "create_workflow",
                nothing_done="No workflow was created.",
                suggestion="Fix every path listed and call again; "
                "create_workflow(..., dry_run=True) checks without saving.",
            )
        created = self.app.workflow_contents_manager.build_workflow_from_raw_description(
            self.trans, RawWorkflowDescription(native), WorkflowCreateOptions(fill_defaults=True)
        )
        if created.missing_tools:
            missing = ", ".join(str(tool[0]) for tool in created.missing_tools)
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                f"Tools not installed: {missing}.",
                "Use tools this server has (search_tools).",
            )
        workflow_id = self.trans.security.encode_id(created.stored_workflow.id)
        schema = self.get_workflow_input_schema(workflow_id)
        return {
            "workflow_id": workflow_id,
            "name": created.stored_workflow.name,
            "inputs": schema["inputs"],
            "steps": schema["steps"],
        }

    def _definition_problems(
        self, native: dict, format2_steps: dict[int, dict]
    ) -> tuple[list[InputProblem], list, list]:
        """Every tool step's state and every connection of a native workflow dict, checked at once."""
        problems: list[InputProblem] = []
        raw_steps = native.get("steps") or {}
        step_dicts = (
            {int(key): value for key, value in raw_steps.items()}
            if isinstance(raw_steps, dict)
            else dict(enumerate(raw_steps))
        )
        modules: dict[int, Any] = {}
        names: dict[int, str] = {}
        steps_out, inputs_out = [], []
        for key in sorted(step_dicts):
            step_dict = step_dicts[key]
            label = step_dict.get("label")
            names[key] = label or str(key)
            step_type = step_dict.get("type", "tool")
            if step_type == "tool":
                tool = (
                    self.app.toolbox.get_tool(
                        step_dict.get("tool_id"), step_dict.get("tool_version"), user=self.trans.user
                    )
                    if step_dict.get("tool_id")
                    else None
                )
                if tool is None:
                    close = closest_names(str(step_dict.get("tool_id")), list(self.app.toolbox.tools_by_id))
                    problems.append(
                        InputProblem(
                            f"steps.{names[key]}.tool_id",
                            UNKNOWN_STEP,
                            f"Tool {step_dict.get('tool_id')!r} is not installed on this Galaxy."
                            + (f" Did you mean {listed(close)}?" if close else ""),
                            "Find tools with search_tools(query).",
                            tuple(close) or None,
                        )
                    )
                    continue
            try:
                modules[key] = module_factory.from_dict(self.trans, step_dict, detached=True, exact_tools=False)
            except Exception as e:  # Galaxy's modules raise many kinds on a bad step
                problems.append(
                    InputProblem(
                        f"steps.{names[key]}",
                        INVALID_VALUE,
                        f"Galaxy cannot read this step: {str(e)[:200]}",
                        "Compare with get_workflow_input_schema of a working workflow.",
                    )
                )
                continue
            steps_out.append(
                {"step_index": key, "label": label, "type": step_type, "tool_id": step_dict.get("tool_id")}
            )
            if step_type in INPUT_KINDS:
                inputs_out.append({"label": label, "step_index": key, "kind": INPUT_KINDS[step_type]})
        for key in sorted(modules):
            problems.extend(self._connection_problems(key, step_dicts[key], modules, names))
            step_dict = step_dicts[key]
            if step_dict.get("type", "tool") == "tool":
                state, connected = _step_state(step_dict, format2_steps.get(key))
                connected |= set(_connection_names(step_dict))
                problems.extend(
                    self._tool_state_problems(
                        step_dict["tool_id"],
                        step_dict.get("tool_version"),
                        state,
                        f"steps.{names[key]}.state",
                        partial=True,
                        connected=sorted(connected),
                    )
                )
        return problems, steps_out, inputs_out

    def _connection_problems(self, key: int, step_dict: dict, modules: dict, names: dict) -> list[InputProblem]:
        problems = []
        module = modules[key]
        accepted_inputs = [entry["name"] for entry in module.get_all_inputs(connectable_only=True)]
        for input_name, connections in (step_dict.get("input_connections") or {}).items():
            path = f"steps.{names[key]}.in.{input_name}"
            if (
                accepted_inputs is not None
                and step_dict.get("type", "tool") == "tool"
                and input_name not in accepted_inputs
                and not input_name.startswith("__")
            ):
                close = closest_names(
                    input_name.replace("|", "."), [name.replace("|", ".") for name in accepted_inputs]
                )
                problems.append(
                    InputProblem(
                        path,
                        BAD_CONNECTION,
                        f"Step {names[key]!r} has no data input {input_name!r}."
                        + (f" Did you mean {listed(close)}?" if close else ""),
                        f"Connect one of: {listed(accepted_inputs)}.",
                        tuple(accepted_inputs),
                    )
                )
            for connection in _listify(connections):
                if not isinstance(connection, dict):
                    continue
                source = connection.get("id")
                source = int(source) if str(source).isdigit() else source
                output_name = connection.get("output_name")
                if source not in modules:
                    problems.append(
                        InputProblem(
                            path,
                            BAD_CONNECTION,
                            f"It connects to step {source!r}, which the workflow does not have.",
                            "Connect an earlier step by its label.",
                        )
                    )
                    continue
                outputs = [entry["name"] for entry in modules[source].get_all_outputs()]
                if output_name not in outputs:
                    close = closest_names(str(output_name), outputs)
                    problems.append(
                        InputProblem(
                            path,
                            BAD_CONNECTION,
                            f"Step {names[source]!r} has no output {output_name!r}."
                            + (f" Did you mean {listed(close)}?" if close else ""),
                            f"Connect {names[source]}/<output> with one of its outputs: {listed(outputs)}.",
                            tuple(outputs),
                        )
                    )
        return problems

    # ==== Access ====

    def _accessible_workflow(self, workflow_id: str, version: int | None) -> tuple[StoredWorkflow, Workflow]:
        try:
            decoded = self.trans.security.decode_id(workflow_id)
        except (exceptions.MalformedId, ValueError, TypeError):
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                f"workflow_id {workflow_id!r} is not a valid encoded id.",
                "Use an `id` from list_workflows().",
            ) from None
        try:
            stored = self.app.workflow_manager.get_stored_accessible_workflow(self.trans, decoded, by_stored_id=True)
        except exceptions.ObjectNotFound:
            raise AnalysisError(
                ErrorCode.NOT_FOUND, f"No workflow with id {workflow_id} exists.", "List yours with list_workflows()."
            ) from None
        except (exceptions.ItemAccessibilityException, exceptions.ItemOwnershipException):
            raise AnalysisError(
                ErrorCode.AUTHORIZATION_ERROR,
                f"Workflow {workflow_id} is not accessible to this API key's user (another user's private workflow).",
                "Use your own workflows, or published or shared ones (list_workflows(show_published=True)).",
            ) from None
        try:
            workflow = stored.get_internal_version(version)
        except (exceptions.MessageException, IndexError):
            raise AnalysisError(
                ErrorCode.NOT_FOUND,
                f"Workflow {workflow_id} has no version {version} (versions 0..{len(stored.workflows) - 1}).",
                "Omit version for the latest.",
            ) from None
        return stored, workflow


_NO_DEFAULT = object()


def _ordered_steps(workflow: Workflow) -> list:
    return sorted(workflow.steps, key=lambda step: step.order_index)


def _all_jobs(invocation: WorkflowInvocation):
    """Every job of an invocation so far, those of its subworkflow invocations (at any depth) included."""
    for invocation_step in invocation.steps:
        yield from invocation_step.jobs
    for association in invocation.subworkflow_invocations:
        if association.subworkflow_invocation is not None:
            yield from _all_jobs(association.subworkflow_invocation)


def _still_scheduling(invocation: WorkflowInvocation) -> bool:
    """Whether Galaxy is still scheduling this invocation or one of its subworkflow invocations."""
    return invocation.active or any(
        _still_scheduling(association.subworkflow_invocation)
        for association in invocation.subworkflow_invocations
        if association.subworkflow_invocation is not None
    )


def _step_ref(step) -> WorkflowStepRef:
    return WorkflowStepRef(step.order_index, step.effective_label, step.type, step.tool_id)


def _step_summary(step) -> dict[str, Any]:
    return {"step_index": step.order_index, "label": step.effective_label, "type": step.type, "tool_id": step.tool_id}


def _placeholder(entry: dict[str, Any]) -> Any:
    if entry["kind"] == "dataset":
        return {"src": "hda", "id": "<dataset_id>"}
    if entry["kind"] == "collection":
        return {"src": "hdca", "id": f"<{entry.get('collection_type', 'list')} collection_id>"}
    if "default" in entry:
        return entry["default"]
    if entry.get("options"):
        return entry["options"][0]
    return {"integer": 0, "float": 0.0, "boolean": False}.get(entry.get("type"), "")


def _option_value(option: Any) -> Any:
    return option.get("value") if isinstance(option, dict) else option


def _listify(value: Any) -> list:
    if value is None or value == "":
        return []
    if isinstance(value, list):
        return value
    if isinstance(value, str):
        return [part for part in value.split(",") if part]
    return [value]


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _upgrade_messages_error(error: Exception, workflow: Workflow) -> AnalysisError | None:
    """Galaxy's "Workflow step has upgrade messages" (a stored step lacks parameters its tool has),
    naming the steps by label and what Galaxy says is missing; None for any other error."""
    details = (getattr(error, "extra_error_info", None) or {}).get("err_data")
    if "upgrade messages" not in str(error) or not isinstance(details, dict):
        return None
    names = {step.order_index: step.effective_label or str(step.order_index) for step in workflow.steps}
    listed_steps = "; ".join(
        f"step {names.get(index, index)!r}: {json.dumps(messages, default=str)[:300]}"
        for index, messages in details.items()
    )
    return AnalysisError(
        ErrorCode.VALIDATION_ERROR,
        f"Galaxy refuses to invoke this workflow: its stored steps lack tool parameters ({listed_steps}). "
        "Nothing was invoked.",
        "Save the workflow again with create_workflow (it stores every tool default), "
        "or fix the steps in Galaxy's workflow editor.",
    )


def _collection_verdict(given_type: str, accepted_type: str) -> str:
    """accept | map_over | refuse, by Galaxy's collection-type descriptions."""
    accepted = COLLECTION_TYPE_DESCRIPTION_FACTORY.for_collection_type(accepted_type)
    given = COLLECTION_TYPE_DESCRIPTION_FACTORY.for_collection_type(given_type)
    if accepted.accepts(given):
        return "accept"
    if given.can_map_over(accepted):
        return "map_over"
    return "refuse"


def _expected_jobs(steps, map_sizes: dict[int, int]) -> list[dict[str, Any]]:
    """Jobs each tool step will run: 1, or the size of the collection mapped over upstream of it."""
    by_id = {step.id: step for step in steps}
    size: dict[int, int] = {}
    result = []
    for step in steps:  # ordered: sources come before the steps they feed
        upstream = [
            size.get(by_id[c.output_step_id].order_index, 0)
            for c in step.input_connections
            if c.output_step_id in by_id
        ]
        size[step.order_index] = max([map_sizes.get(step.order_index, 0), *upstream])
        if step.type == "tool":
            result.append(
                {
                    "step_index": step.order_index,
                    "label": step.label,
                    "tool_id": step.tool_id,
                    "jobs_expected": size[step.order_index] or 1,
                }
            )
        elif step.type == "subworkflow" and step.subworkflow is not None:
            # Its tool steps (nested ones too), each once per element mapped over; maps inside it are not counted.
            result.append(
                {
                    "step_index": step.order_index,
                    "label": step.label,
                    "tool_id": None,
                    "subworkflow": True,
                    "jobs_expected": (size[step.order_index] or 1) * _tool_steps(step.subworkflow),
                }
            )
    return result


def _tool_steps(workflow: Workflow) -> int:
    return sum(
        _tool_steps(step.subworkflow) if step.type == "subworkflow" and step.subworkflow else step.type == "tool"
        for step in workflow.steps
    )


def _consumed_not_produced(jobs: list[Job], groups: list[int], session) -> tuple[list, list]:
    """Workflow inputs by default: what the selected jobs read that none of them made, by hid."""
    produced_datasets: set[int] = set()
    produced_collections: set[int] = set()
    group_of = {}
    for group in groups:
        icj = session.get(ImplicitCollectionJobs, group)
        group_of[icj.representative_job.id] = icj
        for job in icj.job_list:
            produced_datasets.update(assoc.dataset_id for assoc in job.output_datasets)
        produced_collections.update(hdca.id for hdca in icj.output_dataset_collection_instances)
    for job in jobs:
        produced_datasets.update(assoc.dataset_id for assoc in job.output_datasets)
        produced_collections.update(assoc.dataset_collection_id for assoc in job.output_dataset_collection_instances)
    datasets: dict[int, HistoryDatasetAssociation] = {}
    collections: dict[int, HistoryDatasetCollectionAssociation] = {}
    for job in jobs:
        mapped_names: set[str] = set()
        icj = group_of.get(job.id)
        if icj is not None:
            outputs = icj.output_dataset_collection_instances
            for icol in outputs[0].implicit_input_collections if outputs else []:
                mapped_names.add(icol.name)
                hdca = icol.input_dataset_collection
                if hdca is not None and hdca.id not in produced_collections:
                    collections[hdca.id] = hdca
        for assoc in job.input_datasets:
            if assoc.name in mapped_names or _base_name(assoc.name) in mapped_names or assoc.dataset is None:
                continue
            if assoc.dataset_id not in produced_datasets:
                datasets[assoc.dataset_id] = assoc.dataset
        for assoc in job.input_dataset_collections:
            if assoc.dataset_collection_id not in produced_collections and assoc.dataset_collection is not None:
                collections[assoc.dataset_collection_id] = assoc.dataset_collection
    return sorted(datasets.values(), key=lambda item: item.hid), sorted(collections.values(), key=lambda item: item.hid)


def _base_name(name: str) -> str:
    """A multiple data input's job association names end in a number (``input1`` -> ``input``)."""
    return name.rstrip("0123456789")


def _parse_definition(definition: Any) -> dict[str, Any]:
    if isinstance(definition, str):
        try:
            parsed = yaml.safe_load(definition)
        except yaml.YAMLError as e:
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                f"definition is not valid YAML or JSON: {str(e)[:300]}",
                "Send the Format 2 document as YAML text or as a JSON object.",
            ) from None
        definition = parsed
    if not isinstance(definition, dict):
        raise AnalysisError(
            ErrorCode.VALIDATION_ERROR,
            "definition must be a workflow document (an object).",
            "Send a Format 2 document or a native .ga object.",
        )
    if (
        definition.get("class") != "GalaxyWorkflow"
        and definition.get("a_galaxy_workflow") != "true"
        and "steps" not in definition
    ):
        raise AnalysisError(
            ErrorCode.VALIDATION_ERROR,
            "definition is neither Format 2 (class: GalaxyWorkflow) "
            "nor a native .ga workflow (a_galaxy_workflow: 'true').",
            "Start from create_workflow_from_history's `definition`.",
        )
    return json.loads(json.dumps(definition))


def _format2_steps(as_dict: dict[str, Any]) -> dict[int, dict]:
    """Format 2 tool steps by the native step index gxformat2 gives them (inputs first, then steps)."""
    if as_dict.get("class") != "GalaxyWorkflow":
        return {}
    inputs = as_dict.get("inputs") or {}
    steps = as_dict.get("steps") or {}
    step_list = list(steps.values()) if isinstance(steps, dict) else list(steps)
    return {len(inputs) + i: step for i, step in enumerate(step_list) if isinstance(step, dict)}


def _step_state(step_dict: dict, format2_step: dict | None) -> tuple[dict, set[str]]:
    """The state a step's author wrote (Format 2 ``state``/``tool_state``, or the native JSON),
    without Galaxy's bookkeeping keys; and the parameters it marks as connected or set at run time."""
    state: Any = None
    if format2_step is not None:
        state = format2_step.get("state", format2_step.get("tool_state"))
    if state is None:
        state = step_dict.get("tool_state")
        if isinstance(state, str):
            try:
                state = json.loads(state)
            except ValueError:
                state = {}
            state = {key: _decoded(value) for key, value in (state or {}).items()}
    if not isinstance(state, dict):
        return {}, set()
    connected: set[str] = set()
    return _without_runtime_values(state, "", connected), connected


def _decoded(value: Any) -> Any:
    """Native .ga tool states keep each top-level value JSON-encoded once more."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _without_runtime_values(state: dict, prefix: str, connected: set[str]) -> dict:
    result = {}
    for key, value in state.items():
        if key in GALAXY_RUNTIME_KEYS or key.startswith("__"):
            continue
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value.get("__class__") in RUNTIME_VALUE_CLASSES:
            connected.add(name)
            continue
        if isinstance(value, dict):
            result[key] = _without_runtime_values(value, f"{name}|", connected)
        elif isinstance(value, list):
            result[key] = [
                _without_runtime_values(item, f"{name}_{i}|", connected) if isinstance(item, dict) else item
                for i, item in enumerate(value)
            ]
        else:
            result[key] = value
    return result


def _connection_names(step_dict: dict) -> list[str]:
    return list((step_dict.get("input_connections") or {}).keys())
