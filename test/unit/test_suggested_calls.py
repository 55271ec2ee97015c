"""The parser the debugging tests use to make every call a hint names (test/integration/suggested_calls.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "integration"))

from suggested_calls import (  # noqa: E402
    calls_in,
    CHOOSE,
)

TOOLS = {"rerun_job", "create_dataset_from_text", "get_job_errors"}


def test_calls_are_found_with_literals_json_words_and_choices():
    text = ("Fix the failed input: rerun_job(job_id='a1', changes=..., replace_outputs=true): then "
            "get_job_errors(dataset_id='d(2)') and create_dataset_from_text(history_id='h', content='x)\\n', "
            "file_type=...). Not a call: rerun_job as repair says; nor unknown(x=1).")
    calls = calls_in(text, TOOLS)
    assert [call.tool for call in calls] == ["rerun_job", "get_job_errors", "create_dataset_from_text"]
    assert calls[0].arguments == {"job_id": "a1", "changes": CHOOSE, "replace_outputs": True}
    assert calls[1].arguments == {"dataset_id": "d(2)"}
    assert calls[2].fill(file_type="txt") == {"history_id": "h", "content": "x)\n", "file_type": "txt"}


def test_a_forgotten_choice_fails_the_test_that_forgot_it():
    [call] = calls_in("rerun_job(job_id='a', changes=...)", TOOLS)
    try:
        call.fill()
    except AssertionError as refused:
        assert "changes" in str(refused)
    else:
        raise AssertionError("a CHOOSE left unfilled must fail")
