"""Workflow rules that need no Galaxy: naming inputs and steps, clean definitions, progress.

An agent names a workflow's inputs by the labels ``get_workflow_input_schema`` shows,
or by step index; steps likewise. Galaxy's invocation request wants step indexes and
reports database step ids; these rules translate one way and never the other, and
collect every problem (``core.input_problems``) instead of stopping at the first.
Galaxy's own model decides datatypes, collection types and parameter values
(``operations.workflows.input_checks``); what is here is bookkeeping around it.
"""

import re
from collections.abc import (
    Callable,
    Iterable,
    Mapping,
    Sequence,
)
from dataclasses import (
    dataclass,
    field,
)
from typing import Any

from galaxy_mcp_analysis.core.input_problems import (
    closest_names,
    InputProblem,
    listed,
    MISSING_REQUIRED,
    UNKNOWN_INPUT,
    UNKNOWN_STEP,
    WRONG_TYPE,
)

#: How inputs were keyed (the ``inputs_by`` of invoke_workflow's result).
BY_LABEL = "label"
BY_STEP_INDEX = "step_index"
BY_BOTH = "label+step_index"

#: Galaxy's input step types and the kind an agent sees.
INPUT_KINDS = {"data_input": "dataset", "data_collection_input": "collection", "parameter_input": "parameter"}

#: Job states after which a job makes no progress by itself ("paused" waits on a failed input).
TERMINAL_JOB_STATES = frozenset({"ok", "error", "failed", "deleted", "deleted_new", "skipped", "paused", "stopped"})
FAILED_JOB_STATES = frozenset({"error", "failed"})
#: Invocation states in which Galaxy still schedules steps.
SCHEDULING_STATES = frozenset({"new", "ready", "requires_materialization", "cancelling"})
#: Job ids listed per step of a progress summary (the counts cover them all).
MAX_JOB_IDS_PER_STEP = 20


@dataclass(frozen=True)
class WorkflowInput:
    """One input step of a workflow as an agent addresses it."""

    step_index: int
    label: str | None
    kind: str  # dataset | collection | parameter
    optional: bool
    has_default: bool = False

    @property
    def name(self) -> str:
        """How errors name this input: its label, else its step index."""
        return self.label if self.label else str(self.step_index)


@dataclass(frozen=True)
class WorkflowStepRef:
    """Any step of a workflow, for ``parameters`` keys and progress."""

    step_index: int
    label: str | None
    type: str
    tool_id: str | None = None

    @property
    def name(self) -> str:
        return self.label if self.label else str(self.step_index)


@dataclass
class ResolvedInputs:
    #: step index -> the value given for that input step
    values: dict[int, Any] = field(default_factory=dict)
    #: step index -> the key the caller used (for error paths)
    keys: dict[int, str] = field(default_factory=dict)
    inputs_by: str | None = None
    problems: list[InputProblem] = field(default_factory=list)


def resolve_inputs(given: Mapping[str, Any], inputs: Sequence[WorkflowInput]) -> ResolvedInputs:
    """Map ``invoke_workflow``'s ``inputs`` keys (labels or step indexes) onto input steps.

    A key is a label first, then a step index; a key naming no input step, two keys
    naming one step, and a required input without value or default are problems.
    """
    resolved = ResolvedInputs()
    by_label = {entry.label: entry for entry in inputs if entry.label}
    by_index = {str(entry.step_index): entry for entry in inputs}
    used: set[str] = set()
    for key, value in given.items():
        key = str(key)
        if key in by_label:
            entry, how = by_label[key], BY_LABEL
        elif key in by_index:
            entry, how = by_index[key], BY_STEP_INDEX
        else:
            resolved.problems.append(unknown_input_problem(key, inputs))
            continue
        if entry.step_index in resolved.keys:
            first = resolved.keys[entry.step_index]
            resolved.problems.append(
                InputProblem(
                    f"inputs.{key}",
                    UNKNOWN_INPUT,
                    f"inputs.{key} and inputs.{first} both name input {entry.name!r} (step {entry.step_index}).",
                    f"Give input {entry.name!r} once.",
                )
            )
            continue
        used.add(how)
        resolved.values[entry.step_index] = value
        resolved.keys[entry.step_index] = key
    for entry in inputs:
        given_value = resolved.values.get(entry.step_index)
        if given_value is None and not entry.optional and not entry.has_default:
            resolved.problems.append(
                InputProblem(
                    f"inputs.{entry.name}",
                    MISSING_REQUIRED,
                    f"Input {entry.name!r} (step {entry.step_index}, a {entry.kind}) is required and was not given.",
                    f"Add inputs[{entry.name!r}]; get_workflow_input_schema's template shows its shape.",
                )
            )
    resolved.inputs_by = BY_BOTH if len(used) > 1 else (used.pop() if used else BY_LABEL)
    return resolved


def unknown_input_problem(key: str, inputs: Sequence[WorkflowInput]) -> InputProblem:
    names = [entry.label for entry in inputs if entry.label] + [str(entry.step_index) for entry in inputs]
    close = closest_names(key, names)
    message = f"The workflow has no input {key!r}."
    if close:
        message += f" Did you mean {listed(close)}?"
    valid = [entry.name for entry in inputs]
    return InputProblem(
        f"inputs.{key}",
        UNKNOWN_INPUT,
        message,
        (f"Rename it to {close[0]!r}." if close else f"Use one of: {listed(valid)}.")
        + " Inputs are keyed by label (or step index) as get_workflow_input_schema shows them.",
        tuple(valid),
    )


def resolve_step(key: str, steps: Sequence[WorkflowStepRef]) -> WorkflowStepRef | InputProblem:
    """The step a ``parameters`` key names (label first, then step index), or the problem."""
    key = str(key)
    for step in steps:
        if step.label and step.label == key:
            return step
    for step in steps:
        if str(step.step_index) == key:
            return step
    names = [step.label for step in steps if step.label] + [str(step.step_index) for step in steps]
    close = closest_names(key, names)
    message = f"The workflow has no step {key!r}."
    if close:
        message += f" Did you mean {listed(close)}?"
    tool_steps = [step.name for step in steps if step.type == "tool"]
    return InputProblem(
        f"parameters.{key}",
        UNKNOWN_STEP,
        message,
        (f"Rename it to {close[0]!r}." if close else f"Use a tool step: {listed(tool_steps)}.")
        + " Steps are keyed by label (or step index) as get_workflow_input_schema's `parameters` shows them.",
        tuple(tool_steps),
    )


def not_a_tool_step_problem(key: str, step: WorkflowStepRef) -> InputProblem:
    return InputProblem(
        f"parameters.{key}",
        WRONG_TYPE,
        f"Step {step.name!r} is a {step.type} step; `parameters` sets tool parameters of tool steps only.",
        "Give workflow inputs (datasets, collections, parameter values) in `inputs`, keyed by label.",
    )


def unique_labels(names: Iterable[str]) -> list[str]:
    """``names`` made unique in order: a repeated name gets `` 2``, `` 3``... (never an empty label)."""
    seen: set[str] = set()
    result = []
    for name in names:
        base = (name or "").strip() or "input"
        candidate, n = base, 1
        while candidate in seen:
            n += 1
            candidate = f"{base} {n}"
        seen.add(candidate)
        result.append(candidate)
    return result


# ---- Clean Format 2 definitions ----

#: Galaxy's bookkeeping keys in a job's parameters: ``__workflow_invocation_uuid__``,
#: ``__input_ext``, ``__job_resource``, ``__current_case__``...
_INTERNAL_KEY = re.compile(r"^__.*")
#: Keys Galaxy adds to every job's parameters that no tool declares.
GALAXY_RUNTIME_KEYS = frozenset({"chromInfo", "dbkey", "__input_ext", "__workflow_invocation_uuid__", "__job_resource"})


@dataclass
class CleanedDefinition:
    definition: dict[str, Any]
    #: ``steps.<label>.tool_state.<key>`` of every value removed
    removed: list[str] = field(default_factory=list)
    #: paths of values still holding a server path (none expected)
    server_paths: list[str] = field(default_factory=list)


def clean_tool_state(
    state: Mapping[str, Any], parameter_names: set[str] | None, path: str, removed: list[str]
) -> dict[str, Any]:
    """A tool step's state without Galaxy's internal keys (and, when the tool's parameter names
    are known, without any top-level key the tool does not declare)."""
    cleaned = {}
    for key, value in state.items():
        internal = key in GALAXY_RUNTIME_KEYS or _INTERNAL_KEY.match(key)
        undeclared = parameter_names is not None and key not in parameter_names
        if (internal and (parameter_names is None or key not in parameter_names)) or undeclared:
            removed.append(f"{path}.{key}")
            continue
        cleaned[key] = _without_current_case(value)
    return cleaned


def _without_current_case(value: Any) -> Any:
    """``__current_case__`` (a conditional's selected-branch index) is derived, never set by hand."""
    if isinstance(value, dict):
        return {k: _without_current_case(v) for k, v in value.items() if k != "__current_case__"}
    if isinstance(value, list):
        return [_without_current_case(v) for v in value]
    return value


def clean_format2(
    definition: Mapping[str, Any],
    parameter_names: Callable[[str, str | None], set[str] | None],
    server_paths: Sequence[str],
) -> CleanedDefinition:
    """A Format 2 (gxformat2) workflow as an agent may read, share and send back.

    Every tool step's ``tool_state``/``state`` loses Galaxy's internal keys and
    keys its tool does not declare; any string still holding one of ``server_paths``
    is reported (the caller decides). Step order, labels and connections are kept.
    """
    result = CleanedDefinition(definition=_copy(definition))
    steps = result.definition.get("steps")
    step_items: list[tuple[str, dict]] = []
    if isinstance(steps, dict):
        step_items = [(str(name), step) for name, step in steps.items() if isinstance(step, dict)]
    elif isinstance(steps, list):
        step_items = [
            (str(step.get("label") or step.get("id") or i), step)
            for i, step in enumerate(steps)
            if isinstance(step, dict)
        ]
    for name, step in step_items:
        tool_id = step.get("tool_id")
        if not tool_id:
            continue
        names = parameter_names(tool_id, step.get("tool_version"))
        for state_key in ("tool_state", "state"):
            if isinstance(step.get(state_key), dict):
                step[state_key] = clean_tool_state(step[state_key], names, f"steps.{name}.{state_key}", result.removed)
    prefixes = tuple(p.rstrip("/") + "/" for p in server_paths if p)
    for path, value in _strings(result.definition, ""):
        if prefixes and any(prefix in value for prefix in prefixes):
            result.server_paths.append(path.lstrip("."))
    return result


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _strings(value: Any, path: str):
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _strings(item, f"{path}[{i}]")


# ---- Progress ----


@dataclass(frozen=True)
class StepJob:
    job_id: str
    state: str
    #: ok, but an output it must produce is empty (jobs.get_job_errors' verdict)
    suspected_silent_failure: bool = False


@dataclass
class StepProgress:
    step: WorkflowStepRef
    #: the invocation step's state (None: not scheduled yet)
    state: str | None
    jobs: list[StepJob] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    #: a subworkflow step: its own invocation (``jobs`` are that invocation's, nested ones included)
    subworkflow_invocation_id: str | None = None
    #: ... and whether that invocation (or one nested in it) is still being scheduled
    subworkflow_scheduling: bool = False


def summarize_progress(invocation_state: str, steps: Sequence[StepProgress]) -> dict[str, Any]:
    """The ``progress`` of ``get_invocation_details``: per step, jobs by state, failed steps.

    ``terminal``: scheduling has ended and no job can still move by itself (every
    job terminal; a paused job waits on a failed input and counts as terminal).
    """
    scheduling = invocation_state in SCHEDULING_STATES or any(p.subworkflow_scheduling for p in steps)
    entries = []
    failed_steps = []
    silent_steps = []
    all_jobs_terminal = True
    totals: dict[str, int] = {}
    for progress in sorted(steps, key=lambda p: p.step.step_index):
        counts: dict[str, int] = {}
        for job in progress.jobs:
            counts[job.state] = counts.get(job.state, 0) + 1
            totals[job.state] = totals.get(job.state, 0) + 1
            if job.state not in TERMINAL_JOB_STATES:
                all_jobs_terminal = False
        failed = [job.job_id for job in progress.jobs if job.state in FAILED_JOB_STATES]
        silent = [job.job_id for job in progress.jobs if job.state == "ok" and job.suspected_silent_failure]
        entries.append(_step_entry(progress, counts))
        reference = {
            "step_index": progress.step.step_index,
            "label": progress.step.label,
            "tool_id": progress.step.tool_id,
        }
        if failed:
            failed_steps.append({**reference, "job_ids": failed[:MAX_JOB_IDS_PER_STEP]})
        if silent:
            silent_steps.append({**reference, "job_ids": silent[:MAX_JOB_IDS_PER_STEP]})
    terminal = not scheduling and all_jobs_terminal
    if failed_steps:
        state = "failed"
    elif invocation_state in ("failed", "cancelled", "cancelling"):
        state = invocation_state
    elif terminal:
        state = "ok"
    else:
        state = "running" if totals else "scheduling"
    return {
        "state": state,
        "invocation_state": invocation_state,
        "terminal": terminal,
        "steps": entries,
        "jobs": totals,
        "failed_steps": failed_steps,
        "silently_failed_steps": silent_steps,
        "suspected_silent_failure": bool(silent_steps),
    }


def _step_entry(progress: StepProgress, counts: dict[str, int]) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "step_index": progress.step.step_index,
        "label": progress.step.label,
        "type": progress.step.type,
        "tool_id": progress.step.tool_id,
        "state": _step_state(progress),
        "jobs": counts,
        "job_ids": [job.job_id for job in progress.jobs][:MAX_JOB_IDS_PER_STEP],
        "outputs": progress.outputs,
    }
    if len(progress.jobs) > MAX_JOB_IDS_PER_STEP:
        entry["job_ids_truncated"] = True
    if progress.subworkflow_invocation_id:
        entry["subworkflow_invocation_id"] = progress.subworkflow_invocation_id
    return entry


def _step_state(progress: StepProgress) -> str:
    """One word per step: its jobs' worst state, else Galaxy's scheduling state of the step."""
    states = {job.state for job in progress.jobs}
    for state in ("error", "failed", "paused", "running", "queued", "new", "stopped", "deleted", "skipped"):
        if state in states:
            return state
    if states and states <= {"ok"}:
        return "ok"
    if states:
        return sorted(states)[0]
    if progress.subworkflow_scheduling:
        return "scheduling"
    return progress.state or "unscheduled"
