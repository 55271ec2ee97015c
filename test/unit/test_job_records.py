"""core.job_records: a job's row read as columns, and core.job_logs.evidence_of."""

from datetime import datetime
from decimal import Decimal

from galaxy_mcp_analysis.core.job_logs import (
    evidence_of,
    JobEvidence,
)
from galaxy_mcp_analysis.core.job_records import (
    dataset_size,
    instance_state,
    JobRecord,
    Memo,
    OutputRecord,
    outputs_of,
    total_from_page,
)


def job(state="ok", *outputs, collections=()):
    return JobRecord(id=1, state=state, tool_id="Cut1", create_time=datetime(2026, 1, 1), outputs=outputs,
                     collections=collections)


def test_a_datasets_state_is_its_own_when_set_else_its_files():
    assert instance_state("failed_metadata", "ok") == "failed_metadata"
    assert instance_state(None, "ok") == "ok"
    assert instance_state("", "error") == "error"
    assert instance_state(None, None) is None


def test_sizes_are_ints_and_purged_or_unmeasured_sizes_are_none():
    assert dataset_size(False, False, Decimal(12)) == 12
    assert dataset_size(False, False, Decimal(0)) == 0
    assert dataset_size(True, False, Decimal(12)) is None
    assert dataset_size(False, True, Decimal(12)) is None
    assert dataset_size(None, None, None) is None


def test_failed_and_hidden_outputs_need_a_dataset():
    record = job(
        "ok",
        OutputRecord("a", 10, state="error", size=0, visible=False),
        OutputRecord("b", 11, state="failed_metadata", size=3),
        OutputRecord("c", 12, state="ok", size=3),
        OutputRecord("d", None, state="error", visible=False),
    )
    assert record.failed_outputs == [10, 11]
    assert record.hidden_outputs is True
    assert job("ok", OutputRecord("c", 12, state="ok", size=3)).hidden_outputs is False


def test_only_an_ok_job_with_an_empty_output_that_did_not_fail_has_something_to_judge():
    empty = OutputRecord("out", 10, state="ok", size=0)
    assert job("ok", empty).has_empty_output is True
    assert job("error", empty).has_empty_output is False
    assert job("ok", OutputRecord("out", 10, state="error", size=0)).has_empty_output is False
    assert job("ok", OutputRecord("out", 10, state="ok", size=None)).has_empty_output is False
    assert job("ok", OutputRecord("out", 10, state="ok", size=5)).has_empty_output is False
    assert job("ok").has_empty_output is False


def test_only_an_ended_job_can_have_been_replaced():
    for state in ("ok", "error", "failed", "deleted", "stopped", "skipped"):
        assert job(state).has_ended, state
    for state in ("new", "queued", "running", "paused", "upload", "waiting", "deleting"):
        assert not job(state).has_ended, state


def test_a_short_page_says_the_total_and_a_full_or_empty_late_page_does_not():
    assert total_from_page(0, 50, 10) == 10
    assert total_from_page(0, 50, 0) == 0
    assert total_from_page(100, 50, 7) == 107
    assert total_from_page(0, 50, 50) is None  # more may follow
    assert total_from_page(100, 50, 0) is None  # the listing may end before offset 100
    assert total_from_page(100, 50, 50) is None


def test_outputs_list_datasets_then_collections_in_order():
    record = job("ok", OutputRecord("b", 2), OutputRecord("a", 1), collections=(("list", 9),))
    assert outputs_of(record, lambda i: f"e{i}") == [
        {"name": "b", "dataset_id": "e2"}, {"name": "a", "dataset_id": "e1"}, {"name": "list", "collection_id": "e9"},
    ]


def test_memo_answers_each_argument_once():
    calls = []

    def encode(i):
        calls.append(i)
        return f"e{i}"

    memo = Memo(encode)
    assert [memo(1), memo(2), memo(1), memo(1)] == ["e1", "e2", "e1", "e1"]
    assert calls == [1, 2]


def test_evidence_counts_stderr_in_utf8_bytes_and_reads_each_messages_desc():
    evidence = evidence_of(1, "é\n", [{"desc": "Exit code 1"}, {"code_desc": None}], [0, None])
    assert evidence == JobEvidence(exit_code=1, tool_stderr_bytes=3, warnings=("Exit code 1", "{'code_desc': None}"),
                                   input_sizes=(0, None))
    assert evidence_of(None, None, None, ()) == JobEvidence()
