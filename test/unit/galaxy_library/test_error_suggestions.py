"""Every error code's suggestion fits its cause (mcp.errors is the one mapping): a refused capability is not
answered with "use an item you own", an unknown id names where valid ids come from, and so on."""

import pytest
from galaxy import exceptions

from galaxy_mcp_analysis.core.errors import (
    AnalysisError,
    ErrorCode,
    InvalidInput,
)
from galaxy_mcp_analysis.mcp import errors
from galaxy_mcp_analysis.mcp.errors import coded_text

#: Per code: (the failure, its arguments, a phrase the suggestion must hold, a phrase it must not).
CAUSES = {
    ErrorCode.AUTHORIZATION_ERROR: [
        (exceptions.ItemAccessibilityException("History is not accessible by user"), {"history_id": "a1"},
         "Use an item you own", None),
        (exceptions.InsufficientPermissionsException("User is not allowed to run unprivileged tools"), {},
         "User-defined tools are not enabled for this account", "item you own"),
        (exceptions.AdminRequiredException("You must be an administrator to access this feature."), {},
         "needs a Galaxy admin account", "item you own"),
        (exceptions.ConfigDoesNotAllowException("Disabled by the admin."), {},
         "configuration does not allow it", "item you own"),
    ],
    ErrorCode.NOT_FOUND: [
        (exceptions.ObjectNotFound("Job not found"), {"job_id": "abc"}, "wait_for_jobs(history_id=...)", None),
        (exceptions.ObjectNotFound("Dataset not found"), {"dataset_id": "abc"}, "get_history_contents", None),
        (exceptions.ObjectNotFound("No user tool"), {"uuid": "abc"}, "list_user_tools()", None),
    ],
    ErrorCode.VALIDATION_ERROR: [
        (InvalidInput("offset must be >= 0"), {}, "Fix the argument named in the message", None),
        (exceptions.RequestParameterInvalidException("bad value"), {}, "Fix the argument", None),
    ],
    ErrorCode.AUTHENTICATION_ERROR: [
        (exceptions.AuthenticationRequired("Provide a valid API key"), {}, "Send a valid Galaxy API key", None),
        (ValueError("User must be authenticated"), {}, "Send a valid Galaxy API key", None),
    ],
    ErrorCode.NOT_READY: [
        (exceptions.ToolInputsNotReadyException("An input is not ready"), {}, "wait_for_jobs", None),
    ],
    ErrorCode.CONFLICT: [
        (exceptions.ItemImmutableException("Item is immutable"), {}, "Reload the item's current state", None),
        (exceptions.Conflict("Already exists"), {}, "Reload", None),
    ],
    ErrorCode.SYSTEM_ERROR: [
        (RuntimeError("boom"), {}, "report the correlation id", None),
    ],
    ErrorCode.FORBIDDEN: [
        (AnalysisError(ErrorCode.FORBIDDEN, "Policy rule x denies run_tool.", None), {},
         "This server's policy refuses the call", None),
    ],
    ErrorCode.RATE_LIMITED: [
        (AnalysisError(ErrorCode.RATE_LIMITED, "Too many calls.", None), {}, "Wait retry_after_seconds", None),
    ],
}


def test_every_code_has_causes():
    assert set(CAUSES) == set(ErrorCode)


@pytest.mark.parametrize("code, failure, arguments, fits, misfits", [
    (code, *cause) for code, causes in CAUSES.items() for cause in causes
], ids=lambda value: type(value).__name__ if isinstance(value, BaseException) else None)
def test_a_suggestion_fits_its_cause(code, failure, arguments, fits, misfits):
    text = coded_text(failure, "some_tool", arguments)
    assert text.startswith(f"[{code.value}]"), text
    suggestion = text.split("\nSuggestion: ", 1)[1]
    assert fits in suggestion, text
    assert misfits is None or misfits not in suggestion, text


def test_every_cause_specific_suggestion_is_paired_with_a_cause():
    """A row of the table no cause above reaches would be a suggestion no test ever read."""
    suggestions = [coded_text(failure, "t", arguments)
                   for causes in CAUSES.values() for failure, arguments, *_ in causes]
    for _, _, suggestion in errors._SUGGESTION_BY_CAUSE:
        assert any(suggestion in text for text in suggestions), suggestion
