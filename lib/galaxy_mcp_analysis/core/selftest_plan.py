"""The admin's self-test, the pure part: its steps, how each outcome is judged, and its report lines.

Each step exercises one MCP tool (a tool exercised in two ways has two steps, told apart by a
note). A step ``needs`` what earlier steps ``make`` (a history, a collection, a workflow ...); when
one of those is missing because its step failed or was denied, the step is SKIPPED. A tool absent
from the caller's ``tools/list``, or an error starting ``[FORBIDDEN]`` or ``[RATE_LIMITED]``, is
DENIED: the admin's policy refused it, which is not a failure. Exit status 0 unless a step FAILED.
"""

from dataclasses import dataclass

PASS = "PASS"
FAIL = "FAIL"
DENIED = "DENIED"
SKIPPED = "SKIPPED"
OUTCOMES = (PASS, FAIL, DENIED, SKIPPED)

#: Error codes meaning "the policy refused this caller", not "the tool is broken".
DENIAL_CODES = ("[FORBIDDEN]", "[RATE_LIMITED]")

#: The Galaxy tool mapped over the test's collection (bundled with Galaxy; `make serve` serves it).
MAPPED_TOOL = "Remove beginning1"


@dataclass(frozen=True)
class Step:
    tool: str
    needs: tuple[str, ...] = ()
    makes: tuple[str, ...] = ()
    note: str = ""

    @property
    def label(self) -> str:
        return f"{self.tool} ({self.note})" if self.note else self.tool


@dataclass(frozen=True)
class Result:
    label: str
    outcome: str
    detail: str = ""

    def line(self) -> str:
        return f"{self.outcome:<7} {self.label}" + (f": {self.detail}" if self.detail else "")


#: In order. What the steps make: user (the key works), history, pasted (datasets and their upload
#: jobs), uploaded, collection, mapped (jobs and their implicit collection), finished, outputs (the
#: mapped outputs by element), rerun, page, page_deleted, workflow, invocation, invoked, workflow_deleted,
#: deleted.
PLAN = (
    Step("connect", makes=("user",)),
    Step("get_server_info", needs=("user",)),
    Step("create_history", needs=("user",), makes=("history",)),
    Step("update_history", needs=("history",)),
    Step("create_dataset_from_text", needs=("history",), makes=("pasted",)),
    Step("create_upload_url", needs=("pasted",), note="one PUT of a small file"),
    Step("wait_for_jobs", needs=("pasted",), makes=("uploaded",), note="uploads"),
    Step("get_dataset_details", needs=("uploaded",)),
    Step("create_collection", needs=("uploaded",), makes=("collection",)),
    Step("peek_collection_content", needs=("collection",)),
    Step("get_tool_details", needs=("user",)),
    Step("check_tool_inputs", needs=("collection",)),
    Step("run_tool", needs=("collection",), makes=("mapped",), note="map-over"),
    Step("wait_for_jobs", needs=("mapped",), makes=("finished",), note="map-over"),
    Step("get_collection_details", needs=("finished",), makes=("outputs",)),
    Step("peek_dataset_content", needs=("outputs",), note="ranged read"),
    Step("get_job_errors", needs=("outputs",)),
    Step("get_job_status", needs=("finished",)),
    Step("list_jobs", needs=("finished",)),
    Step("get_job_parameters", needs=("finished",)),
    Step("rerun_job", needs=("finished",), makes=("rerun",)),
    Step("cancel_job", needs=("rerun",)),
    Step("validate_page_content", needs=("uploaded",)),
    Step("create_page", needs=("uploaded",), makes=("page",), note="embedded dataset"),
    Step("update_page", needs=("page",)),
    Step("get_page", needs=("page",), note="rendered"),
    Step("list_page_revisions", needs=("page",)),
    Step("delete_page", needs=("page",), makes=("page_deleted",)),
    Step("restore_page", needs=("page_deleted",)),
    Step("create_workflow_from_history", needs=("finished",), makes=("workflow",)),
    Step("get_workflow_input_schema", needs=("workflow",)),
    Step("check_workflow_inputs", needs=("workflow", "collection")),
    Step("invoke_workflow", needs=("workflow", "collection"), makes=("invocation",)),
    Step("wait_for_jobs", needs=("invocation",), makes=("invoked",), note="invocation"),
    Step("get_invocation_details", needs=("invoked",)),
    Step("delete_workflow", needs=("workflow",), makes=("workflow_deleted",)),
    Step("restore_workflow", needs=("workflow_deleted",)),
    Step("update_dataset", needs=("uploaded",)),
    Step("delete_history_items", needs=("uploaded",), makes=("deleted",), note="delete"),
    Step("restore_history_items", needs=("deleted",)),
    Step("delete_history_items", needs=("uploaded",), note="purge"),
)


def first_line(text: str) -> str:
    return next((line.strip() for line in str(text).splitlines() if line.strip()), "")


def error_outcome(text: str) -> str:
    """DENIED for a policy's refusal, FAIL for any other tool error."""
    return DENIED if str(text).lstrip().startswith(DENIAL_CODES) else FAIL


def error_result(step: Step, text: str) -> Result:
    return Result(step.label, error_outcome(text), first_line(text))


def blocked(step: Step, made, listed) -> Result | None:
    """DENIED when the tool is not in the caller's tools/list, SKIPPED when an earlier step did
    not make what this one needs; None when the step can run."""
    if step.tool not in listed:
        return Result(step.label, DENIED, "not in this caller's tools/list")
    missing = [need for need in step.needs if need not in made]
    if missing:
        return Result(step.label, SKIPPED, f"no {missing[0]}: an earlier step failed or was denied")
    return None


def summary_line(results: list[Result], seconds: float) -> str:
    counts = {outcome: sum(result.outcome == outcome for result in results) for outcome in OUTCOMES}
    return (f"selftest: {counts[PASS]} passed, {counts[FAIL]} failed, {counts[DENIED]} denied, "
            f"{counts[SKIPPED]} skipped in {seconds:.0f} s")


def exit_status(results: list[Result]) -> int:
    return 1 if any(result.outcome == FAIL for result in results) else 0
