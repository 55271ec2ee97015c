import logging

import pytest
from galaxy import exceptions

from galaxy_mcp_analysis.core.byte_range import RangeError
from galaxy_mcp_analysis.errors import (
    AnalysisError,
    ErrorCode,
    to_tool_error,
)


@pytest.mark.parametrize(
    ("exception", "code"),
    [
        (exceptions.ObjectNotFound("no such history"), "NOT_FOUND"),
        (exceptions.ItemAccessibilityException("not yours"), "AUTHORIZATION_ERROR"),
        (exceptions.MalformedId("bad id"), "VALIDATION_ERROR"),
        (exceptions.RequestParameterInvalidException("bad"), "VALIDATION_ERROR"),
        (exceptions.AuthenticationFailed("bad key"), "AUTHENTICATION_ERROR"),
        (exceptions.Conflict("exists"), "CONFLICT"),
        (RangeError("offset must be an integer >= 0, got -1"), "VALIDATION_ERROR"),
    ],
)
def test_galaxy_and_core_exceptions_map_to_codes(exception, code):
    text = str(to_tool_error(exception, "peek_dataset_content"))
    assert text.startswith(f"[{code}] ")
    assert str(exception) in text.splitlines()[0]
    assert text.splitlines()[-1].startswith("Suggestion: ")


def test_analysis_error_keeps_its_message_and_suggestion():
    text = str(to_tool_error(AnalysisError(ErrorCode.NOT_READY, "still running", "wait"), "x"))
    assert text == "[NOT_READY] still running\nSuggestion: wait"


def test_unexpected_errors_hide_internals_behind_a_logged_correlation_id(caplog):
    try:
        open("/no/such/dir/secret.sqlite")
    except OSError as e:
        exception = e
    with caplog.at_level(logging.ERROR):
        text = str(to_tool_error(exception, "peek_dataset_content"))
    assert text.startswith("[SYSTEM_ERROR] peek_dataset_content failed with an unexpected server error")
    assert "/no/such" not in text and "Traceback" not in text
    correlation_id = text.split("correlation id ")[1].split(")")[0]
    assert correlation_id in caplog.text and "secret.sqlite" in caplog.text
