import logging

import pytest
from galaxy import exceptions

from galaxy_mcp_analysis.core.byte_range import RangeError
from fastmcp.exceptions import ToolError

from galaxy_mcp_analysis.mcp.errors import (
    AnalysisError,
    CallersMistakesAsWarnings,
    coded_text,
    ErrorCode,
    leaks_internals,
    looks_internal,
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


def stock_tool_failure(exception):
    """What Galaxy's stock tools raise (_mcp_error_handler), as FastMCP's call_tool wraps it."""
    from fastmcp.exceptions import ToolError

    try:
        try:
            raise exception
        except ValueError:
            raise
        except Exception as e:
            raise ValueError(f"get_history_details failed: {e}") from e
    except Exception as wrapped:
        try:
            raise ToolError(f"Error calling tool 'get_history_details': {wrapped}") from wrapped
        except ToolError as outer:
            return outer


def test_the_galaxy_exception_behind_a_stock_tools_wrappers_decides_the_code():
    text = coded_text(stock_tool_failure(exceptions.ObjectNotFound("History not found")), "get_history_details",
                      {"history_id": "f2db41e1fa331b3e"})
    assert text.startswith("[NOT_FOUND] get_history_details: History not found\n")
    assert "list_histories()" in text.splitlines()[-1]


@pytest.mark.parametrize(
    ("message", "code"),
    [
        ("Invalid API key. Please check your API key and try again.", "AUTHENTICATION_ERROR"),
        ("Tool 'nope' not found", "NOT_FOUND"),
        ("User-defined tool 'x' is deactivated", "CONFLICT"),
        ("Either history_id or history_name must be provided", "VALIDATION_ERROR"),
    ],
)
def test_plain_value_errors_of_galaxys_operations_are_coded_by_their_text(message, code):
    assert coded_text(stock_tool_failure(ValueError(message)), "get_history_details").startswith(f"[{code}] ")


def test_an_unexpected_exception_behind_the_wrappers_is_a_system_error(caplog):
    with caplog.at_level(logging.ERROR):
        text = coded_text(stock_tool_failure(KeyError("/srv/galaxy/secret")), "get_history_details")
    assert text.startswith("[SYSTEM_ERROR] get_history_details failed with an unexpected server error")
    assert "secret" not in text and "secret" in caplog.text


@pytest.mark.parametrize(
    "message",
    [
        'Traceback (most recent call last):\n  File "x.py", line 3',
        "could not open /tmp/galaxy/files/000/dataset_1.dat",
        "(sqlite3.OperationalError) no such table",
        "bad statement: SELECT id FROM history WHERE id = 3",
    ],
)
def test_galaxy_messages_that_leak_internals_become_system_errors(message):
    text = coded_text(stock_tool_failure(exceptions.RequestParameterInvalidException(message)), "get_history_details")
    assert text.startswith("[SYSTEM_ERROR] ") and not looks_internal(text)


def test_ordinary_words_are_not_mistaken_for_internals():
    assert not looks_internal("Select a dataset from your history; see https://example.org/tmp/x")


def test_an_already_coded_error_is_never_coded_twice():
    from fastmcp.exceptions import ToolError

    coded = "[NOT_READY] still running\nSuggestion: wait"
    assert coded_text(ToolError(coded), "peek_dataset_content") == coded


def test_galaxy_classes_that_say_more_than_their_status():
    assert coded_text(exceptions.ItemImmutableException("archived"), "x").startswith("[CONFLICT] ")
    assert coded_text(exceptions.ToolInputsNotReadyException("inputs"), "x").startswith("[NOT_READY] ")
    assert coded_text(exceptions.AuthenticationRequired("log in"), "x").startswith("[AUTHENTICATION_ERROR] ")
    # An unknown collection id: Galaxy's 400 says the id names nothing.
    unknown = exceptions.RequestParameterInvalidException("History dataset collection association not found")
    assert coded_text(unknown, "get_collection_details").startswith("[NOT_FOUND] ")
    # Galaxy's generic lookup quotes the decoded id, an integer the caller never sent: not shown.
    lookup = coded_text(exceptions.MessageException("Invalid Page id ( 1000000000 ) specified", type="error"), "get_page")
    assert lookup.startswith("[NOT_FOUND] get_page: no page has this id.") and "1000000000" not in lookup, lookup


def test_unknown_tool():
    from fastmcp.exceptions import NotFoundError

    text = coded_text(NotFoundError("Unknown tool: 'peek'"), "peek")
    assert text.startswith("[NOT_FOUND] There is no tool named 'peek'") and "tools/list" in text


def test_an_echoed_path_like_argument_is_the_callers_text_not_a_leak():
    # Galaxy quotes the id it was given; the path is the caller's own, so the code stays Galaxy's.
    wrong = exceptions.MalformedId("Wrong id ( file:///etc/passwd ) specified")
    text = coded_text(wrong, "get_dataset_details", {"dataset_id": "file:///etc/passwd"})
    assert text.startswith("[VALIDATION_ERROR] get_dataset_details: Wrong id ( file:///etc/passwd ) specified")


def test_a_real_server_path_next_to_an_echoed_argument_is_still_hidden(caplog):
    leak = exceptions.MalformedId("Wrong id ( abc ) in /srv/galaxy/database/objects/000/1.dat")
    with caplog.at_level(logging.ERROR):
        text = coded_text(leak, "get_dataset_details", {"dataset_id": "abc"})
    assert text.startswith("[SYSTEM_ERROR] ") and "/srv/" not in text


def test_huge_echoed_arguments_are_shortened_and_messages_capped():
    huge = "a" * 2_000_000
    text = coded_text(exceptions.MalformedId(f"Wrong id ( {huge} ) specified"), "get_dataset_details", {"dataset_id": huge})
    assert text.startswith("[VALIDATION_ERROR] ") and "...<2000000 characters>" in text
    assert len(text) < 500
    ours = coded_text(AnalysisError(ErrorCode.NOT_FOUND, f"No dataset {huge}.", "list"), "x", {"dataset_id": huge})
    assert len(ours) < 500
    unechoed = coded_text(AnalysisError(ErrorCode.NOT_FOUND, "b" * 10_000, "list"), "x")
    assert len(unechoed) < 2_200 and "[8000 more characters]" in unechoed


def test_leaks_are_judged_beyond_what_the_caller_sent():
    text = "[VALIDATION_ERROR] history_id 'file:///etc/passwd' is not a valid encoded id."
    assert leaks_internals(text, {"history_id": "file:///etc/passwd"}) is False
    assert leaks_internals(text) is True
    assert leaks_internals(text + " see /var/galaxy/x", {"history_id": "file:///etc/passwd"}) is True


def _record_of(exc: BaseException | None, level=logging.ERROR, with_exc_info=True) -> logging.LogRecord:
    exc_info = (type(exc), exc, exc.__traceback__) if exc is not None and with_exc_info else None
    return logging.LogRecord("fastmcp.server.server", level, __file__, 1, "Error calling tool 'x'", (), exc_info)


def _galaxy_wrapped(original: BaseException) -> ValueError:
    """What Galaxy's stock _mcp_error_handler raises: ValueError(...) from the original."""
    try:
        try:
            raise original
        except Exception as e:
            raise ValueError(f"x failed: {e}") from e
    except ValueError as wrapped:
        return wrapped


@pytest.mark.parametrize(
    "exc, mistake",
    [
        (AnalysisError(ErrorCode.VALIDATION_ERROR, "bad", "fix"), True),
        (_galaxy_wrapped(exceptions.ObjectNotFound("no such history")), True),
        (_galaxy_wrapped(exceptions.ItemAccessibilityException("not yours")), True),
        (ToolError("[FORBIDDEN] rule r: no"), True),
        (AnalysisError(ErrorCode.SYSTEM_ERROR, "broken", "retry"), False),
        (_galaxy_wrapped(KeyError("bug")), False),
        (_galaxy_wrapped(exceptions.InternalServerError("db down")), False),
        (ValueError("a plain ValueError"), False),  # by its text alone it is not judged the caller's
    ],
)
def test_a_callers_mistake_is_a_warning_without_traceback(exc, mistake):
    record = _record_of(exc)
    assert CallersMistakesAsWarnings().filter(record) is True  # never drops a record
    assert (record.levelno, record.exc_info is None) == ((logging.WARNING, True) if mistake else (logging.ERROR, False))


def test_galaxys_handler_line_is_judged_by_the_exception_being_handled():
    record = _record_of(None)  # Galaxy logs f"MCP {operation}: {e}" inside its except block, no exc_info
    try:
        raise exceptions.ObjectNotFound("no such dataset")
    except exceptions.ObjectNotFound:
        CallersMistakesAsWarnings().filter(record)
    assert record.levelno == logging.WARNING
    outside = _record_of(None)
    CallersMistakesAsWarnings().filter(outside)
    assert outside.levelno == logging.ERROR


def test_our_tools_errors_carry_their_log_level():
    assert to_tool_error(AnalysisError(ErrorCode.NOT_FOUND, "gone", "list"), "t").log_level == logging.WARNING
    assert to_tool_error(KeyError("bug"), "t").log_level == logging.ERROR
