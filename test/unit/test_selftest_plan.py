"""The self-test's plan and report: outcomes judged from error texts, skips, lines, summary, exit status."""

import pytest

from galaxy_mcp_analysis import selftest
from galaxy_mcp_analysis.core import selftest_plan as plan
from galaxy_mcp_analysis.selftest import steps as selftest_steps

EVERY_TOOL = {step.tool for step in plan.PLAN}


@pytest.mark.parametrize("text", [
    "[FORBIDDEN] rule no-purge-for-users: Purging is for admins.\nSuggestion: ask an admin.",
    "[RATE_LIMITED] rule slow-down: 60 calls per minute. retry_after_seconds=12",
    "  [FORBIDDEN] rule read-only: only reading tools",
])
def test_a_policy_refusal_is_denied_not_failed(text):
    assert plan.error_outcome(text) == plan.DENIED
    result = plan.error_result(plan.Step("delete_history_items", note="purge"), text)
    assert result == plan.Result("delete_history_items (purge)", plan.DENIED, plan.first_line(text))
    assert "\n" not in result.line()


@pytest.mark.parametrize("text", [
    "[VALIDATION_ERROR] inputs.num_lines: 'x' is not an integer\nSuggestion: pass a number.",
    "[AUTHENTICATION_ERROR] The API key is not valid.",
    "[SYSTEM_ERROR] Unexpected failure (correlation id 1234)",
    "The forbidden word [FORBIDDEN] later in the text",
    "",
])
def test_any_other_error_fails_with_its_first_line(text):
    assert plan.error_outcome(text) == plan.FAIL
    assert plan.error_result(plan.Step("run_tool"), text).detail == plan.first_line(text)


def test_a_tool_missing_from_tools_list_is_denied_before_its_prerequisites_are_asked():
    step = plan.Step("rerun_job", needs=("finished",))
    assert plan.blocked(step, {}, EVERY_TOOL - {"rerun_job"}) == plan.Result(
        "rerun_job", plan.DENIED, "not in this caller's tools/list")


def test_a_step_whose_prerequisite_is_missing_is_skipped_and_one_that_has_them_runs():
    step = plan.Step("cancel_job", needs=("rerun",))
    skipped = plan.blocked(step, {"history": "h"}, EVERY_TOOL)
    assert (skipped.outcome, skipped.detail) == (plan.SKIPPED, "no rerun: an earlier step failed or was denied")
    assert plan.blocked(step, {"rerun": "j"}, EVERY_TOOL) is None


def test_every_need_is_made_by_an_earlier_step_and_every_step_has_its_checks():
    made = set()
    for step in plan.PLAN:
        assert set(step.needs) <= made, step.label
        made |= set(step.makes)
    labels = [step.label for step in plan.PLAN]
    assert len(labels) == len(set(labels))
    assert set(labels) == set(selftest_steps.STEPS)


def test_a_denied_history_skips_everything_after_it():
    made = {"user": "u"}
    results = []
    for step in plan.PLAN:
        result = plan.blocked(step, made, EVERY_TOOL - {"create_history"})
        if result is None:  # it would run: stand for a pass that makes what it says
            made.update(dict.fromkeys(step.makes, "x"))
            result = plan.Result(step.label, plan.PASS)
        results.append(result)
    outcomes = [result.outcome for result in results]
    assert outcomes[:3] == [plan.PASS, plan.PASS, plan.DENIED]
    assert outcomes.count(plan.PASS) == 3  # connect, get_server_info, get_tool_details (needs only the user)
    assert outcomes.count(plan.SKIPPED) == len(plan.PLAN) - 4
    assert plan.exit_status(results) == 0


def test_the_summary_counts_each_outcome_and_only_a_failure_fails():
    results = [plan.Result("connect", plan.PASS, "as demo"), plan.Result("run_tool", plan.DENIED, "[FORBIDDEN] x"),
               plan.Result("cancel_job", plan.SKIPPED), plan.Result("get_page", plan.PASS)]
    assert plan.summary_line(results, 73.6) == "selftest: 2 passed, 0 failed, 1 denied, 1 skipped in 74 s"
    assert plan.exit_status(results) == 0
    results.append(plan.Result("cleanup", plan.FAIL, "history not removed"))
    assert plan.summary_line(results, 0.2).startswith("selftest: 2 passed, 1 failed, 1 denied, 1 skipped in 0 s")
    assert plan.exit_status(results) == 1


def test_report_lines_align_the_outcome_and_name_the_step():
    assert plan.Result("connect", plan.PASS, "as demo").line() == "PASS    connect: as demo"
    assert plan.Result("wait_for_jobs (uploads)", plan.SKIPPED).line() == "SKIPPED wait_for_jobs (uploads)"


@pytest.mark.parametrize("url", ["http://127.0.0.1:8080", "http://127.0.0.1:8080/", "http://127.0.0.1:8080/api/mcp",
                                 "http://127.0.0.1:8080/api/mcp/"])
def test_the_mcp_endpoint_is_found_from_the_base_url(url):
    assert selftest.mcp_url(url) == "http://127.0.0.1:8080/api/mcp"


def test_no_session_is_one_failed_connect_line_and_a_summary(unused_port):
    lines = []
    assert selftest.run(f"http://127.0.0.1:{unused_port}", "key", out=lines.append) == 1
    assert len(lines) == 2 and lines[0].startswith(f"FAIL    connect: MCP session at http://127.0.0.1:{unused_port}/api/mcp")
    assert lines[1].startswith("selftest: 0 passed, 1 failed, 0 denied, 0 skipped in ")


@pytest.fixture
def unused_port():
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
