"""core.job_logs and core.waiting: log excerpts, the silent-failure rule, bounded polling."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from galaxy_mcp_analysis.core.errors import InvalidInput
from galaxy_mcp_analysis.core.job_logs import (
    cause_line,
    declared_output,
    engine_cause,
    excerpt,
    judge_outputs,
    JobEvidence,
    JobOutput,
    log_budget,
    LogBudgetError,
    MIN_LOG_BYTES,
)
from galaxy_mcp_analysis.core.waiting import (
    FIRST_INTERVAL_SECONDS,
    INTERVAL_SHARE_OF_WAIT,
    MAX_INTERVAL_SECONDS,
    needing_attention,
    paused_explanation,
    poll_until,
    wait_budget,
    WaitArgumentError,
)

PROPERTY = settings(max_examples=300, deadline=None)
MARKER = re.compile(r"\n\[\.\.\. (\d+) bytes dropped from the middle of this log \.\.\.\]\n")

# Logs biased towards what breaks byte cuts: 2-, 3- and 4-byte characters, newlines, tracebacks.
_PIECES = st.one_of(
    st.sampled_from(["\n", "é", "€", "😀", "日本語", "Traceback (most recent call last):\n", "x" * 40]),
    st.characters(blacklist_categories=("Cs",)),
)
LOGS = st.lists(_PIECES, max_size=300).map("".join)
BUDGETS = st.integers(min_value=MIN_LOG_BYTES, max_value=700)


def split_excerpt(data: bytes, text: str, dropped: int) -> tuple[bytes, bytes]:
    """(head, tail) bytes of a truncated excerpt of ``data``; fails unless the shape is exact."""
    for match in MARKER.finditer(text):
        head, tail = text[: match.start()].encode(), text[match.end() :].encode()
        if int(match.group(1)) == dropped and data.startswith(head) and data.endswith(tail):
            if len(head) + dropped + len(tail) == len(data):
                return head, tail
    raise AssertionError(f"no head + marker + tail split of {text!r}")


@PROPERTY
@given(LOGS, BUDGETS)
def test_an_excerpt_never_exceeds_its_byte_budget(log, max_bytes):
    assert len(excerpt(log, max_bytes).text.encode()) <= max_bytes


@PROPERTY
@given(LOGS, BUDGETS)
def test_a_log_that_fits_is_returned_whole(log, max_bytes):
    result = excerpt(log, max_bytes)
    assert result.truncated == (len(log.encode()) > max_bytes)
    if not result.truncated:
        assert (result.text, result.dropped_bytes) == (log, 0)


@PROPERTY
@given(LOGS, BUDGETS)
def test_a_long_log_keeps_exact_head_and_tail_around_one_marker(log, max_bytes):
    data = log.encode()
    result = excerpt(log, max_bytes)
    if not result.truncated:
        return
    head, tail = split_excerpt(data, result.text, result.dropped_bytes)
    # Cuts land on character starts only, so the budget is used up to 3 bytes per cut
    # (and the digits the real count has fewer than the total's).
    digit_slack = len(str(len(data))) - len(str(result.dropped_bytes))
    assert len(result.text.encode()) >= max_bytes - 6 - digit_slack
    assert len(tail) + 3 >= len(head)  # the end of a log, where failures are, gets the larger share


def test_cuts_never_split_a_multi_byte_character():
    log = "é" * 500 + "😀" * 500  # 1000 two-byte then 2000 four-byte
    for max_bytes in range(MIN_LOG_BYTES, MIN_LOG_BYTES + 8):
        result = excerpt(log, max_bytes)
        head, tail = split_excerpt(log.encode(), result.text, result.dropped_bytes)
        assert set(head.decode()) == {"é"} and set(tail.decode()) == {"😀"}
        assert len(result.text.encode()) <= max_bytes


def test_the_marker_counts_the_bytes_dropped():
    log = "START\n" + "m" * 10_000 + "\nEND: Fatal error: exit code 1\n"
    result = excerpt(log, 1000)
    assert result.text.startswith("START\n") and result.text.endswith("END: Fatal error: exit code 1\n")
    assert len(MARKER.findall(result.text)) == 1
    assert result.dropped_bytes == len(log.encode()) - len(MARKER.sub("", result.text).encode())


def test_missing_logs_are_empty_text():
    assert excerpt(None, MIN_LOG_BYTES) == excerpt("", MIN_LOG_BYTES)
    assert excerpt(None, MIN_LOG_BYTES).text == ""


@pytest.mark.parametrize("bad", [MIN_LOG_BYTES - 1, 0, -5, True, 4000.0, "4000"])
def test_a_budget_below_the_minimum_is_an_input_error(bad):
    with pytest.raises(LogBudgetError, match="max_bytes must be an integer >= 256") as raised:
        log_budget(bad, cap=1 << 20)
    assert isinstance(raised.value, InvalidInput)


def test_a_budget_above_the_cap_is_clamped():
    assert log_budget(4000, cap=1 << 20) == (4000, False)
    assert log_budget(5_000_000, cap=1 << 20) == (1 << 20, True)
    assert log_budget(4000, cap=10) == (MIN_LOG_BYTES, True)  # a tiny read cap still leaves a usable log


# ---- the silent-failure rule ----


def output(name="out_file1", size=0, **flags) -> JobOutput:
    return JobOutput(name=name, dataset_id=f"id-{name}", size=size, **flags)


CLEAN = JobEvidence(exit_code=0, input_sizes=(120,))
COMPLAINED = JobEvidence(exit_code=0, tool_stderr_bytes=40, input_sizes=(120,))
WARNED = JobEvidence(exit_code=2, warnings=("Warning: Exit code 2 (Select failed)",), input_sizes=(120,))
EMPTY_IN = JobEvidence(exit_code=0, tool_stderr_bytes=40, input_sizes=(0, 0))


@pytest.mark.parametrize("evidence", [COMPLAINED, WARNED])
def test_an_empty_required_output_of_a_job_that_complained_is_suspect(evidence):
    verdict = judge_outputs("ok", [output(size=0), output("log", size=12)], evidence)
    assert verdict.suspected_silent_failure is True
    [empty] = verdict.empty_outputs
    assert (empty["name"], empty["size"], empty["may_be_empty"]) == ("out_file1", 0, False)
    assert empty["why"].startswith("the tool ") and "left this output empty" in empty["why"]
    assert verdict.evidence == evidence.fields()


def test_an_empty_result_of_a_clean_run_is_no_failure_and_says_what_to_compare():
    """A filter that rightly kept no rows: exit 0, nothing on stderr, no warning."""
    verdict = judge_outputs("ok", [output(size=0)], CLEAN)
    assert verdict.suspected_silent_failure is False
    [empty] = verdict.empty_outputs
    assert empty["may_be_empty"] is True and "get_job_parameters" in empty["why"]
    assert verdict.evidence == {"exit_code": 0, "tool_stderr_bytes": 0, "job_messages": [], "input_sizes": [120]}


def test_empty_in_empty_out_is_never_suspect_even_when_the_tool_complained():
    verdict = judge_outputs("ok", [output(size=0)], EMPTY_IN)
    assert verdict.suspected_silent_failure is False
    assert verdict.empty_outputs[0]["why"].startswith("every data input of the job is empty")


def test_the_same_evidence_gives_the_same_verdict_along_a_chain():
    """filter -> cut -> sort on an empty input: every step is judged alike."""
    steps = [judge_outputs("ok", [output(name)], EMPTY_IN) for name in ("filtered", "cut", "sorted")]
    assert {(v.suspected_silent_failure, v.empty_outputs[0]["why"]) for v in steps} == {
        (False, steps[0].empty_outputs[0]["why"])
    }


def test_an_ok_job_with_only_non_empty_outputs_is_not_suspect():
    verdict = judge_outputs("ok", [output(size=1), output("b", size=10**12)], COMPLAINED)
    assert (verdict.empty_outputs, verdict.suspected_silent_failure, verdict.evidence) == ([], False, None)


@pytest.mark.parametrize(
    ("flags", "why"),
    [({"optional": True}, "optional output"), ({"discovered": True}, "discovered dataset")],
)
def test_outputs_the_tool_allows_to_be_empty_are_listed_but_not_suspect(flags, why):
    verdict = judge_outputs("ok", [output(**flags)], COMPLAINED)
    assert verdict.suspected_silent_failure is False
    [empty] = verdict.empty_outputs
    assert empty["may_be_empty"] is True and empty["why"].startswith(why)


def test_one_required_empty_output_is_enough_among_allowed_ones():
    outputs = [output("unmatched", optional=True), output("split|a", discovered=True), output("main")]
    verdict = judge_outputs("ok", outputs, COMPLAINED)
    assert verdict.suspected_silent_failure is True
    assert [e["name"] for e in verdict.empty_outputs] == ["unmatched", "split|a", "main"]


def test_an_unknown_size_is_not_empty():
    assert judge_outputs("ok", [output(size=None)], COMPLAINED).empty_outputs == []


def test_a_job_without_data_inputs_is_judged_on_its_logs():
    assert JobEvidence(exit_code=0).inputs_empty is False
    assert judge_outputs("ok", [output()], JobEvidence(exit_code=0)).suspected_silent_failure is False
    assert judge_outputs("ok", [output()], JobEvidence(tool_stderr_bytes=1)).suspected_silent_failure is True


@pytest.mark.parametrize("state", ["new", "queued", "running", "error", "failed", "paused", "deleted"])
def test_only_ok_jobs_are_judged(state):
    verdict = judge_outputs(state, [output(size=0)], COMPLAINED)
    assert (verdict.empty_outputs, verdict.suspected_silent_failure) == ([], False)


@pytest.mark.parametrize(
    ("association", "expected"),
    [
        ("out_file1", ("out_file1", False)),
        ("output|__part__|forward", ("output", False)),
        ("__new_primary_file_report|sample1__", ("report", True)),
        ("__new_primary_file_split|a:b__", ("split", True)),
    ],
)
def test_job_output_names_map_to_the_tools_declared_output(association, expected):
    assert declared_output(association) == expected


# ---- bounded polling ----


class FakeTime:
    def __init__(self):
        self.now = 0.0
        self.events: list[str] = []

    def sleep(self, seconds):
        self.events.append(f"sleep {seconds:g}")
        self.now += seconds

    def release(self):
        self.events.append("release")

    def poller(self, polls_until_done: int | None):
        def done():
            self.events.append("poll")
            return polls_until_done is not None and self.events.count("poll") >= polls_until_done

        return done


def test_a_finished_wait_neither_sleeps_nor_releases():
    fake = FakeTime()
    assert poll_until(fake.poller(1), 60, release=fake.release, sleep=fake.sleep, clock=lambda: fake.now) is False
    assert fake.events == ["poll"]


def test_the_session_is_released_before_every_sleep():
    fake = FakeTime()
    timed_out = poll_until(fake.poller(3), 60, release=fake.release, sleep=fake.sleep, clock=lambda: fake.now)
    assert timed_out is False
    assert fake.events == ["poll", "release", "sleep 0.25", "poll", "release", "sleep 0.25", "poll"]


def test_polls_are_frequent_for_the_first_seconds_then_grow_with_the_wait():
    fake = FakeTime()
    poll_until(fake.poller(None), 60, release=fake.release, sleep=fake.sleep, clock=lambda: fake.now)
    sleeps = [float(event.split()[1]) for event in fake.events if event.startswith("sleep")]
    assert sleeps[:20] == [0.25] * 20  # the first 5 s: a short job is seen within 0.25 s of ending
    waited = 0.0
    for slept in sleeps:  # then never more than 5 % of the time already waited: the overshoot stays that small
        assert slept <= max(FIRST_INTERVAL_SECONDS, waited * INTERVAL_SHARE_OF_WAIT) * 1.0001, (waited, slept)
        waited += slept
    assert sleeps[:-1] == sorted(sleeps[:-1]) and MAX_INTERVAL_SECONDS in sleeps  # 2 s after 40 s; the last is cut
    assert 60 < len(sleeps) < 90, len(sleeps)  # a minute's wait: 73 polls (the doubling rule before made 40)


def test_a_wait_ends_at_its_deadline_after_a_last_poll():
    fake = FakeTime()
    assert poll_until(fake.poller(None), 10, release=fake.release, sleep=fake.sleep, clock=lambda: fake.now) is True
    assert fake.now == 10
    assert fake.events[-1] == "poll"
    assert all(fake.events[i - 1] == "release" for i, event in enumerate(fake.events) if event.startswith("sleep"))


def test_a_zero_timeout_checks_once():
    fake = FakeTime()
    assert poll_until(fake.poller(None), 0, release=fake.release, sleep=fake.sleep, clock=lambda: fake.now) is True
    assert fake.events == ["poll"]


def test_timeouts_are_capped_and_checked():
    assert wait_budget(60, cap=120) == (60, False)
    assert wait_budget(600, cap=120) == (120, True)
    assert wait_budget(0, cap=120) == (0, False)
    for bad in (-1, True, 1.5):
        with pytest.raises(WaitArgumentError, match="timeout_seconds must be an integer >= 0"):
            wait_budget(bad, cap=120)


def test_the_wait_cap_is_an_admin_setting():
    from galaxy_mcp_analysis.core.settings import Settings

    assert Settings().max_wait_seconds == 120
    assert Settings.from_environ({"GALAXY_MCP_ANALYSIS_MAX_WAIT_SECONDS": "30"}).max_wait_seconds == 30


def test_an_output_that_failed_on_its_own_is_judged_by_its_state_not_its_size():
    """An upload declared bam whose text fails Galaxy's check: the job is ok, the dataset error and 0 bytes."""
    verdict = judge_outputs("ok", [output(failed=True)], JobEvidence())
    assert (verdict.empty_outputs, verdict.suspected_silent_failure) == ([], False)


# ---- a paused job: what resumes it is its failed input's own repair ----

ERRORED = [{"dataset_id": "d1", "name": "cut", "job_id": "j1"}]


def test_a_job_paused_behind_a_replaceable_failure_resumes_once_it_is_replaced():
    repair = "rerun_job(job_id='j1', changes=..., replace_outputs=true): the new outputs take these places."
    said = paused_explanation("input in error", ERRORED, repair, "p1")["resume_with"]
    assert said.startswith("Fix the failed input: rerun_job(job_id='j1', changes=..., replace_outputs=true)")
    assert "places; once that succeeds, Galaxy resumes this job" in said  # one sentence, no ".;"


def test_a_job_paused_behind_a_failed_upload_is_rerun_on_the_new_upload():
    repair = "create_dataset_from_text(history_id='h', content='x', file_type=...): Galaxy does not rerun uploads."
    said = paused_explanation("input in error", ERRORED, repair, "p1")["resume_with"]
    assert "create_dataset_from_text(" in said and "rerun_job(job_id='p1', changes=...)" in said
    assert "Galaxy resumes" not in said


# ---- a survey's open problems: what a replacement fixed is no longer one ----

def test_the_open_problems_are_failed_flagged_or_with_failed_outputs_and_not_replaced():
    entries = [
        {"job_id": "cut", "state": "error", "replaced_by": "cut2"},  # fixed: keeps its state, not a problem
        {"job_id": "cut2", "state": "ok", "suspected_silent_failure": False},
        {"job_id": "grep", "state": "ok", "suspected_silent_failure": True},
        {"job_id": "bam", "state": "ok", "suspected_silent_failure": False, "failed_outputs": ["d"]},
        {"job_id": "gone", "state": "failed"},
        {"job_id": "sort", "state": "paused"},  # waits for its input: listed under paused, fixed with it
        {"job_id": "empty", "state": "ok", "suspected_silent_failure": False, "empty_outputs": [{"size": 0}]},
    ]
    assert needing_attention(entries) == ["grep", "bam", "gone"]
    assert needing_attention([]) == []


def test_purged_deleted_or_recreated_problems_are_settled_too():
    entries = [
        {"job_id": "upload", "state": "ok", "failed_outputs": ["d"], "recreated_by": "d2"},  # uploaded again, ok
        {"job_id": "purged", "state": "error", "removed": "purged"},
        {"job_id": "deleted", "state": "error", "removed": "deleted"},
        {"job_id": "open", "state": "error", "repair": "rerun_job(...)"},
    ]
    assert needing_attention(entries) == ["open"]


# ---- the stderr line a repair quotes ----

@pytest.mark.parametrize("stderr, cause", [
    (None, None),
    ("", None),
    ("Fatal error: Exit code 1 ()\n", None),  # Galaxy's line says that, never why
    ("reading input.tsv\nawk: cannot open file.txt (No such file or directory)\nFatal error: Exit code 2 ()\n",
     "awk: cannot open file.txt (No such file or directory)"),
    ("Traceback (most recent call last):\n  File \"x.py\", line 3, in <module>\n    main()\n"
     "KeyError: 'gene'\n", "KeyError: 'gene'"),
    ("Loading 3 rows\nWarning: column 2 empty\nsegmentation fault (core dumped)\nbye\n",
     "segmentation fault (core dumped)"),
    ("column 4 out of range\n", "column 4 out of range"),  # no cause word: the last line that is not boilerplate
    ("samtools: [E::hts_open_format] fail to open file 'x.bam'\nError: invalid BAM header\nwrote 0 lines\n",
     "Error: invalid BAM header"),
])
def test_the_cause_line_is_the_last_that_names_one(stderr, cause):
    assert cause_line(stderr) == cause


def test_a_long_cause_line_is_cut():
    line = cause_line("Error: " + "x" * 1000)
    assert line.startswith("Error: xxx") and line.endswith("...") and len(line) == 303


@pytest.mark.parametrize(("logs", "cause"), [
    (("This job was terminated because it ran longer than the maximum allowed job run time.", None), "time_limit"),
    ((None, "slurmstepd: error: *** JOB 7 ON vm CANCELLED AT 2026-11-27T21:00:00 DUE TO TIME LIMIT ***"), "time_limit"),
    (("Tool failed due to insufficient memory. Try with more memory.", ""), "memory_limit"),
    (("Remote job server could not determine this job's state.", None), "lost"),  # Galaxy's Pulsar runner
    (("Job failed", "No columns specified, columns are not preceded with 'c'"), None),
    ((None, None), None),
])
def test_the_engines_cause_is_named_from_galaxys_message_or_the_engines_line(logs, cause):
    assert engine_cause(*logs) == cause
