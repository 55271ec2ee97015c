"""core.workflows: naming inputs and steps, clean Format 2 definitions, progress summaries."""

from galaxy_mcp_analysis.core.workflows import (
    BY_BOTH,
    BY_LABEL,
    BY_STEP_INDEX,
    clean_format2,
    resolve_inputs,
    resolve_step,
    StepJob,
    StepProgress,
    summarize_progress,
    unique_labels,
    WorkflowInput,
    WorkflowStepRef,
)
from galaxy_mcp_analysis.core.input_problems import InputProblem

INPUTS = [
    WorkflowInput(0, "table", "dataset", optional=False),
    WorkflowInput(1, "samples", "collection", optional=True),
    WorkflowInput(2, "lines", "parameter", optional=False, has_default=True),
]


def test_inputs_are_named_by_label_or_step_index_and_the_result_says_which():
    assert resolve_inputs({"table": 1}, INPUTS).inputs_by == BY_LABEL
    by_index = resolve_inputs({"0": 1}, INPUTS)
    assert by_index.inputs_by == BY_STEP_INDEX and by_index.values == {0: 1} and not by_index.problems
    assert resolve_inputs({"table": 1, "1": 2}, INPUTS).inputs_by == BY_BOTH


def test_unknown_twice_given_and_missing_inputs_are_all_problems():
    resolved = resolve_inputs({"tabel": 1, "samples": 2, "1": 3}, INPUTS)
    by_path = {problem.path: problem for problem in resolved.problems}
    assert by_path["inputs.tabel"].rule == "unknown_input" and "Did you mean 'table'" in by_path["inputs.tabel"].message
    assert by_path["inputs.1"].rule == "unknown_input" and "both name input 'samples'" in by_path["inputs.1"].message
    assert by_path["inputs.table"].rule == "missing_required"
    assert "inputs.lines" not in by_path  # it has a default


STEPS = [
    WorkflowStepRef(0, "table", "data_input"),
    WorkflowStepRef(1, "sort", "tool", "sort1"),
    WorkflowStepRef(2, None, "tool", "cat1"),
]


def test_steps_are_named_by_label_or_index_with_the_closest_names_offered():
    assert resolve_step("sort", STEPS).step_index == 1
    assert resolve_step("2", STEPS).tool_id == "cat1"
    problem = resolve_step("srot", STEPS)
    assert isinstance(problem, InputProblem) and problem.rule == "unknown_step"
    assert "Did you mean 'sort'" in problem.message and problem.path == "parameters.srot"


def test_labels_are_made_unique_in_order():
    assert unique_labels(["a", "a", "", "b", "a"]) == ["a", "a 2", "input", "b", "a 3"]


def test_a_definition_loses_galaxys_internal_keys_and_reports_server_paths():
    definition = {
        "class": "GalaxyWorkflow",
        "steps": {
            "sort": {
                "tool_id": "sort1",
                "tool_state": {
                    "column": "2",
                    "__workflow_invocation_uuid__": "0f3e",
                    "chromInfo": "/srv/galaxy/data/len/hg19.len",
                    "__input_ext": "tabular",
                    "cond": {"__current_case__": 1, "x": 1},
                    "leftover": "/srv/galaxy/data/files/1.dat",
                },
            }
        },
    }
    cleaned = clean_format2(definition, lambda tool_id, version: {"column", "cond", "leftover"}, ["/srv/galaxy/data"])
    state = cleaned.definition["steps"]["sort"]["tool_state"]
    assert state == {"column": "2", "cond": {"x": 1}, "leftover": "/srv/galaxy/data/files/1.dat"}
    assert sorted(cleaned.removed) == [
        "steps.sort.tool_state.__input_ext",
        "steps.sort.tool_state.__workflow_invocation_uuid__",
        "steps.sort.tool_state.chromInfo",
    ]
    assert cleaned.server_paths == ["steps.sort.tool_state.leftover"]
    assert "chromInfo" in definition["steps"]["sort"]["tool_state"]  # the input is left as it was


def test_progress_names_failed_steps_and_counts_paused_jobs_as_terminal():
    steps = [
        StepProgress(WorkflowStepRef(0, "table", "data_input"), "scheduled"),
        StepProgress(WorkflowStepRef(1, "cut", "tool", "Cut1"), "scheduled", [StepJob("j1", "error")]),
        StepProgress(WorkflowStepRef(2, "sort", "tool", "sort1"), "scheduled", [StepJob("j2", "paused")]),
    ]
    progress = summarize_progress("scheduled", steps)
    assert progress["terminal"] and progress["state"] == "failed"
    assert progress["failed_steps"] == [{"step_index": 1, "label": "cut", "tool_id": "Cut1", "job_ids": ["j1"]}]
    assert [step["state"] for step in progress["steps"]] == ["scheduled", "error", "paused"]
    assert progress["jobs"] == {"error": 1, "paused": 1}


def test_progress_is_not_terminal_while_scheduling_or_running_and_flags_silent_failures():
    running = [StepProgress(WorkflowStepRef(1, "sort", "tool", "sort1"), "scheduled", [StepJob("j", "running")])]
    assert not summarize_progress("scheduled", running)["terminal"]
    assert not summarize_progress("new", [])["terminal"]
    silent = [StepProgress(WorkflowStepRef(1, "sort", "tool", "sort1"), "scheduled", [StepJob("j", "ok", True)])]
    progress = summarize_progress("scheduled", silent)
    assert progress["terminal"] and progress["state"] == "ok" and progress["suspected_silent_failure"]
    assert progress["silently_failed_steps"][0]["job_ids"] == ["j"]


def test_a_subworkflow_step_counts_its_own_invocations_jobs_and_holds_terminal_while_it_schedules():
    inner = WorkflowStepRef(1, "inner", "subworkflow", None)
    running = [StepProgress(inner, "scheduled", [StepJob("j", "ok")], {}, "sub1", subworkflow_scheduling=True)]
    progress = summarize_progress("scheduled", running)
    assert not progress["terminal"] and progress["steps"][0]["subworkflow_invocation_id"] == "sub1"
    failed = [StepProgress(inner, "scheduled", [StepJob("j", "ok"), StepJob("k", "error")], {}, "sub1")]
    progress = summarize_progress("scheduled", failed)
    assert progress["terminal"] and progress["state"] == "failed"
    assert progress["failed_steps"] == [{"step_index": 1, "label": "inner", "tool_id": None, "job_ids": ["k"]}]
    assert progress["steps"][0]["state"] == "error"
    unscheduled = [StepProgress(inner, None, [], {}, "sub1", subworkflow_scheduling=True)]
    assert summarize_progress("scheduled", unscheduled)["steps"][0]["state"] == "scheduling"
