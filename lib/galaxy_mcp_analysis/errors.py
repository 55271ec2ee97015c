"""The one mapping from failures to the coded MCP tool errors of the contract.

Every tool error text reads ``[CODE] message`` then ``Suggestion: ...`` so an
agent can branch on the code and act on the suggestion. Galaxy's own exception
classes are mapped by their HTTP status (one table below); anything unexpected
becomes ``[SYSTEM_ERROR]`` carrying a correlation id that is also in the server
log with the traceback, so no traceback, path or SQL reaches the agent.
"""

import enum
import logging
import uuid
from contextlib import contextmanager

import pydantic
from fastmcp.exceptions import ToolError

from galaxy_mcp_analysis.core import InvalidInput

log = logging.getLogger(__name__)


class ErrorCode(str, enum.Enum):
    VALIDATION_ERROR = "VALIDATION_ERROR"
    NOT_FOUND = "NOT_FOUND"
    AUTHENTICATION_ERROR = "AUTHENTICATION_ERROR"
    AUTHORIZATION_ERROR = "AUTHORIZATION_ERROR"
    NOT_READY = "NOT_READY"
    CONFLICT = "CONFLICT"
    SYSTEM_ERROR = "SYSTEM_ERROR"


class AnalysisError(Exception):
    """A failure the patch set diagnosed itself, with the code and the next step."""

    def __init__(self, code: ErrorCode, message: str, suggestion: str):
        super().__init__(message)
        self.code = code
        self.message = message
        self.suggestion = suggestion


# Galaxy's MessageException subclasses carry an HTTP status; that status is
# what decides the agent-facing code (ObjectNotFound -> 404, ItemAccessibility -> 403, ...).
_CODE_BY_STATUS = {
    400: ErrorCode.VALIDATION_ERROR,
    401: ErrorCode.AUTHENTICATION_ERROR,
    403: ErrorCode.AUTHORIZATION_ERROR,
    404: ErrorCode.NOT_FOUND,
    409: ErrorCode.CONFLICT,
    413: ErrorCode.VALIDATION_ERROR,
    422: ErrorCode.VALIDATION_ERROR,
}

_DEFAULT_SUGGESTION = {
    ErrorCode.VALIDATION_ERROR: "Fix the argument named in the message and call the tool again.",
    ErrorCode.NOT_FOUND: "Check the id: list what exists with get_history_contents(history_id) or list_histories().",
    ErrorCode.AUTHENTICATION_ERROR: "Pass a valid Galaxy API key (User -> Preferences -> Manage API Key).",
    ErrorCode.AUTHORIZATION_ERROR: "Use an item you own or one shared with you; list yours with list_histories().",
    ErrorCode.NOT_READY: "Wait for the job to finish with get_job_status(job_id), then call this tool again.",
    ErrorCode.CONFLICT: "Reload the item's current state and retry the change on top of it.",
    ErrorCode.SYSTEM_ERROR: "Retry once; if it fails again, report the correlation id to the Galaxy admin.",
}


def format_error(code: ErrorCode, message: str, suggestion: str | None = None) -> str:
    return f"[{code.value}] {message.strip()}\nSuggestion: {(suggestion or _DEFAULT_SUGGESTION[code]).strip()}"


def to_tool_error(exc: BaseException, operation: str) -> ToolError:
    """Translate any exception raised by an operation into a coded ToolError."""
    if isinstance(exc, AnalysisError):
        return ToolError(format_error(exc.code, exc.message, exc.suggestion))
    if isinstance(exc, InvalidInput):
        return ToolError(format_error(ErrorCode.VALIDATION_ERROR, str(exc)))
    if isinstance(exc, pydantic.ValidationError):
        # Raised while building one of Galaxy's request payloads from the agent's arguments.
        return ToolError(format_error(ErrorCode.VALIDATION_ERROR, f"{operation}: {_payload_problems(exc)}"))
    status = getattr(exc, "status_code", None)
    if status in _CODE_BY_STATUS and _is_galaxy_message(exc):
        # Galaxy's MessageException texts are written for API users and carry no internals.
        return ToolError(format_error(_CODE_BY_STATUS[status], f"{operation}: {exc}"))
    correlation_id = uuid.uuid4().hex[:12]
    log.error("MCP tool %s failed unexpectedly [correlation id %s]", operation, correlation_id, exc_info=exc)
    return ToolError(
        format_error(
            ErrorCode.SYSTEM_ERROR,
            f"{operation} failed with an unexpected server error (correlation id {correlation_id}).",
        )
    )


def _payload_problems(exc: "pydantic.ValidationError") -> str:
    return "; ".join(
        f"{'.'.join(str(part) for part in error['loc']) or 'value'}: {error['msg']}" for error in exc.errors()
    )


def _is_galaxy_message(exc: BaseException) -> bool:
    from galaxy.exceptions import MessageException

    return isinstance(exc, MessageException)


@contextmanager
def coded_errors(operation: str):
    """Run a tool body so that every failure leaves it as a coded ToolError."""
    try:
        yield
    except ToolError:
        raise
    except Exception as exc:
        raise to_tool_error(exc, operation) from None
