"""The one mapping from failures to the coded MCP tool errors of the contract.

Every tool error text reads ``[CODE] message`` then ``Suggestion: ...`` so an
agent can branch on the code and act on the suggestion. Galaxy's own exception
classes are mapped here (by class where the class says more, else by HTTP status);
``coded_text`` recovers the original exception behind a wrapper (Galaxy's stock MCP
tools re-raise everything as ``ValueError("<tool> failed: ...")`` and FastMCP wraps
that in a ToolError), so Galaxy's 37 tools and ours speak the same codes. Anything
unexpected, and any message that would leak a path, a traceback or SQL, becomes
``[SYSTEM_ERROR]`` carrying a correlation id that is also in the server log with the
traceback. ``CodedToolErrors`` is the middleware that applies it to every tool call.
"""

import logging
import re
import sys
import uuid
from contextlib import contextmanager
from typing import Any

import pydantic
from fastmcp.exceptions import (
    DisabledError,
    NotFoundError,
    ToolError,
)
from fastmcp.server.middleware import Middleware

from galaxy_mcp_analysis.core.errors import (  # the vocabulary, re-exported with its mapping
    AnalysisError,
    ErrorCode,
    InvalidInput,
)

log = logging.getLogger(__name__)


#: A text that already carries a code; never coded twice.
CODED = re.compile(r"^\[(" + "|".join(code.value for code in ErrorCode) + r")\] ")


# Galaxy's MessageException subclasses carry an HTTP status; that status decides the
# agent-facing code (ObjectNotFound -> 404, ItemAccessibility -> 403, ...) unless the
# class says more than its status (a 403 for an immutable item is a conflict, not a
# permission problem).
_CODE_BY_STATUS = {
    202: ErrorCode.NOT_READY,
    400: ErrorCode.VALIDATION_ERROR,
    401: ErrorCode.AUTHENTICATION_ERROR,
    403: ErrorCode.AUTHORIZATION_ERROR,
    404: ErrorCode.NOT_FOUND,
    409: ErrorCode.CONFLICT,
    410: ErrorCode.NOT_FOUND,
    413: ErrorCode.VALIDATION_ERROR,
    422: ErrorCode.VALIDATION_ERROR,
}
_CODE_BY_GALAXY_CLASS = {
    "AuthenticationRequired": ErrorCode.AUTHENTICATION_ERROR,
    "ItemImmutableException": ErrorCode.CONFLICT,
    "ItemAlreadyClaimedException": ErrorCode.CONFLICT,
    "ToolInputsNotReadyException": ErrorCode.NOT_READY,
}

# Galaxy's operations raise plain ValueErrors for the caller's mistakes
# ("Tool 'x' not found", "User must be authenticated"); their text decides.
_VALUE_ERROR_CODES = (
    (re.compile(r"api key|must be authenticated", re.I), ErrorCode.AUTHENTICATION_ERROR),
    (re.compile(r"not found|no such|does not exist|not accessible", re.I), ErrorCode.NOT_FOUND),
    (re.compile(r"deactivated|already exists", re.I), ErrorCode.CONFLICT),
)

_DEFAULT_SUGGESTION = {
    ErrorCode.VALIDATION_ERROR: "Fix the argument named in the message (see the tool's inputSchema) and call again.",
    ErrorCode.NOT_FOUND: "Check the id: list what exists with get_history_contents(history_id) or list_histories().",
    ErrorCode.AUTHENTICATION_ERROR: "Send a valid Galaxy API key: the x-api-key header or the api_key argument "
    "(User -> Preferences -> Manage API Key).",
    ErrorCode.AUTHORIZATION_ERROR: "Use an item you own or one shared with you; list yours with list_histories().",
    ErrorCode.NOT_READY: "Wait for the job to finish with wait_for_jobs(job_ids=[...]), then call this tool again.",
    ErrorCode.CONFLICT: "Reload the item's current state and retry the change on top of it.",
    ErrorCode.SYSTEM_ERROR: "Retry once; if it fails again, report the correlation id to the Galaxy admin.",
    ErrorCode.FORBIDDEN: "This server's policy refuses the call; do without it or ask the Galaxy admin.",
    ErrorCode.RATE_LIMITED: "Wait retry_after_seconds, then call again.",
}

#: Suggestions that fit a cause better than its code's default: (Galaxy exception class, a pattern of its
#: message, suggestion), first match wins. A 403 is not always about an item: a capability the account
#: lacks (user tools, admin) or the server's configuration needs another next step than "use an item you own".
_SUGGESTION_BY_CAUSE = (
    ("InsufficientPermissionsException", re.compile(r"unprivileged tools", re.I),
     "User-defined tools are not enabled for this account (Galaxy grants them by role): use the toolbox's tools "
     "(search_tools), or ask the Galaxy admin for that role."),
    ("AdminRequiredException", re.compile(""),
     "This needs a Galaxy admin account: do without it, or ask the Galaxy admin."),
    ("ConfigDoesNotAllowException", re.compile(""),
     "This Galaxy's configuration does not allow it: do without it, or ask the Galaxy admin."),
)

#: For [NOT_FOUND], the tool that lists valid values of the id argument the call named.
_LISTER_BY_ARGUMENT = {
    "job_id": "wait_for_jobs(history_id=...) or get_job_details(dataset_id) for job ids",
    "job_ids": "run_tool's `jobs` for job ids",
    "dataset_id": "get_history_contents(history_id) for dataset ids",
    "dataset_ids": "get_history_contents(history_id) for dataset ids",
    "collection_id": "get_history_contents(history_id) for collection ids",
    "invocation_id": "get_invocations() for invocation ids",
    "workflow_id": "list_workflows() for workflow ids",
    "trs_id": "search_iwc_workflows(query) for trs_ids",
    "tool_id": "search_tools(query) for tool ids",
    "uuid": "list_user_tools() for user tool uuids",
    "tool_uuid": "list_user_tools() for user tool uuids",
    "revision_id": "list_page_revisions(page_id) for revision ids",
    "page_id": "list_pages() for page ids",
    "history_id": "list_histories() for history ids",
}

#: Text that must never reach an agent: tracebacks, file paths, SQL.
_INTERNAL = re.compile(
    r"Traceback \(most recent call last\)|\bFile \"|site-packages|\.py\b[\"']?, line \d"
    r"|(?<![\w.:])/(?:tmp|home|usr|var|opt|etc|srv|work|root|proc|data)/"
    r"|sqlalchemy|psycopg|sqlite3\.|\(Background on this error",
    re.IGNORECASE,
)
_SQL = re.compile(r"\bSELECT\b[\s\S]*\bFROM\b|\bINSERT INTO\b|\bUPDATE\b \S+ SET\b|\bDELETE FROM\b")


def looks_internal(text: str) -> bool:
    """True when a message would show an agent a traceback, a server path or SQL."""
    return bool(_INTERNAL.search(text) or _SQL.search(text))


#: An argument value echoed in an error longer than this is shortened (agents pay per token).
MAX_ECHOED_CHARACTERS = 80
#: No error message is longer than this, whatever Galaxy put in it.
MAX_MESSAGE_CHARACTERS = 2000


def _string_values(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _string_values(item)]
    if isinstance(value, (list, tuple)):
        return [text for item in value for text in _string_values(item)]
    return []


def _echo_free(message: str, arguments: dict[str, Any] | None) -> tuple[str, str]:
    """``(shown, judged)``: the message with echoed argument values shortened, and with them
    removed. Galaxy's messages quote the caller's ids ("Wrong id ( file:///etc/passwd )"); what
    the caller sent is neither a leak of the server's internals nor worth sending back whole."""
    shown = judged = message
    values = sorted({text for text in _string_values(arguments or {}) if len(text) >= 3}, key=len, reverse=True)
    for value in values:
        if value not in judged:
            continue
        judged = judged.replace(value, "<argument>")
        if len(value) > MAX_ECHOED_CHARACTERS:
            shown = shown.replace(value, f"{value[:40]}...<{len(value)} characters>")
    return shown, judged


def leaks_internals(message: str, arguments: dict[str, Any] | None = None) -> bool:
    """Whether a message shows internals beyond what the caller itself sent in ``arguments``."""
    return looks_internal(_echo_free(message, arguments)[1])


def _agent_message(message: str, arguments: dict[str, Any] | None) -> str | None:
    """The message as an agent may see it, or None when it would leak internals."""
    shown, judged = _echo_free(message, arguments)
    return None if not shown or looks_internal(judged) else shown


def format_error(code: ErrorCode, message: str, suggestion: str | None = None) -> str:
    message = message.strip()
    if len(message) > MAX_MESSAGE_CHARACTERS:
        message = message[:MAX_MESSAGE_CHARACTERS] + f"... [{len(message) - MAX_MESSAGE_CHARACTERS} more characters]"
    return f"[{code.value}] {message}\nSuggestion: {(suggestion or _DEFAULT_SUGGESTION[code]).strip()}"


def suggestion_for(
    code: ErrorCode, arguments: dict[str, Any] | None = None, cause: BaseException | None = None
) -> str:
    """The next step for a code: one that fits its ``cause`` (_SUGGESTION_BY_CAUSE), else the code's default,
    naming the lister of the id the call passed."""
    if cause is not None:
        names = {cls.__name__ for cls in type(cause).__mro__}
        for class_name, pattern, suggestion in _SUGGESTION_BY_CAUSE:
            if class_name in names and pattern.search(str(cause)):
                return suggestion
    if code is ErrorCode.NOT_FOUND and arguments:
        listers = [lister for name, lister in _LISTER_BY_ARGUMENT.items() if arguments.get(name)]
        if listers:
            return f"Check the id; valid ones come from {listers[0]}."
    return _DEFAULT_SUGGESTION[code]


def exception_chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and what caused it, outermost first (explicit causes, else implicit context)."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or (None if current.__suppress_context__ else current.__context__)
    return chain


#: Galaxy answers an unknown collection id with a 400 (RequestParameterInvalidException,
#: "History dataset collection association not found"): the id names nothing, which is NOT_FOUND.
_UNKNOWN_ASSOCIATION = re.compile(r"collection association not found$")
#: Galaxy's generic object lookup (managers.base.get_object) answers an id that names nothing with a
#: plain 400 quoting the *decoded* id, an integer the caller never sent: NOT_FOUND, without the integer.
_INVALID_OBJECT_ID = re.compile(r"^Invalid (\w+) id \( .* \) specified\.?$")


def galaxy_code(exc: BaseException) -> ErrorCode:
    """The code for one of Galaxy's MessageExceptions (galaxy.exceptions)."""
    for cls in type(exc).__mro__:
        if cls.__name__ in _CODE_BY_GALAXY_CLASS:
            return _CODE_BY_GALAXY_CLASS[cls.__name__]
    if _UNKNOWN_ASSOCIATION.search(str(exc)):
        return ErrorCode.NOT_FOUND
    return _CODE_BY_STATUS.get(getattr(exc, "status_code", 500), ErrorCode.SYSTEM_ERROR)


def to_tool_error(exc: BaseException, operation: str, arguments: dict[str, Any] | None = None) -> ToolError:
    """Translate any exception raised by a tool into a coded ToolError (logged by FastMCP as a
    warning when it is the caller's mistake, as an error when it is the server's)."""
    text = coded_text(exc, operation, arguments)
    server_side = text.startswith(f"[{ErrorCode.SYSTEM_ERROR.value}]")
    return ToolError(text, log_level=logging.ERROR if server_side else logging.WARNING)


def is_callers_mistake(exc: BaseException) -> bool:
    """True when a failure gets a code other than SYSTEM_ERROR by its class (never by its text):
    the agent's to fix, not the admin's, so the log keeps one line and no traceback."""
    for cause in exception_chain(exc):
        if isinstance(cause, AnalysisError):
            return cause.code is not ErrorCode.SYSTEM_ERROR
        if isinstance(cause, (InvalidInput, pydantic.ValidationError, NotFoundError, DisabledError)):
            return True
        if _is_galaxy_message(cause):
            return galaxy_code(cause) is not ErrorCode.SYSTEM_ERROR
        if isinstance(cause, ToolError) and CODED.match(str(cause)):
            return not str(cause).startswith(f"[{ErrorCode.SYSTEM_ERROR.value}]")
    return False


class CallersMistakesAsWarnings(logging.Filter):
    """On FastMCP's and Galaxy's MCP loggers: an ERROR record about a caller's mistake (a bad id, a
    refused input) becomes a one-line WARNING, without traceback; anything else passes unchanged."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.ERROR:
            return True
        # Galaxy's stock handler logs inside its except block, without exc_info: the exception is current.
        exc = record.exc_info[1] if record.exc_info else sys.exc_info()[1]
        if exc is not None and is_callers_mistake(exc):
            record.levelno, record.levelname = logging.WARNING, logging.getLevelName(logging.WARNING)
            record.exc_info, record.exc_text = None, None
        return True


def coded_text(exc: BaseException, operation: str, arguments: dict[str, Any] | None = None) -> str:
    """``[CODE] message`` + ``Suggestion:`` for any failure of the tool ``operation``."""
    if isinstance(exc, ToolError) and CODED.match(str(exc)):
        return str(exc)  # already coded, by our tools or an inner layer
    chain = exception_chain(exc)
    for cause in chain:
        if isinstance(cause, AnalysisError):
            return format_error(cause.code, _echo_free(cause.message, arguments)[0], cause.suggestion)
        if isinstance(cause, InvalidInput):
            return format_error(ErrorCode.VALIDATION_ERROR, _echo_free(str(cause), arguments)[0])
        if isinstance(cause, pydantic.ValidationError):
            # The agent's arguments, or one of Galaxy's request payloads built from them.
            return format_error(ErrorCode.VALIDATION_ERROR, f"{operation}: {_payload_problems(cause)}")
        if isinstance(cause, (NotFoundError, DisabledError)):
            return format_error(
                ErrorCode.NOT_FOUND,
                f"There is no tool named {operation!r} on this server.",
                "List the tools with tools/list; names are case-sensitive (e.g. peek_dataset_content).",
            )
        if _is_galaxy_message(cause):
            unknown = _INVALID_OBJECT_ID.match(str(cause).strip())
            if unknown:
                return format_error(ErrorCode.NOT_FOUND, f"{operation}: no {unknown.group(1).lower()} has this id.",
                                    suggestion_for(ErrorCode.NOT_FOUND, arguments))
            code = galaxy_code(cause)
            message = _agent_message(_strip_wrapper(str(cause), operation), arguments)
            if code is not ErrorCode.SYSTEM_ERROR and message:
                # Galaxy's MessageException texts are written for API users.
                return format_error(code, f"{operation}: {message}", suggestion_for(code, arguments, cause))
            return _system_error(cause, operation)
    root = chain[-1]
    if type(root) is ValueError:
        message = _agent_message(_strip_wrapper(str(root), operation), arguments)
        if message:
            code = next((code for pattern, code in _VALUE_ERROR_CODES if pattern.search(message)), None)
            code = code or ErrorCode.VALIDATION_ERROR
            return format_error(code, f"{operation}: {message}", suggestion_for(code, arguments))
    return _system_error(root, operation)


def _system_error(exc: BaseException, operation: str) -> str:
    correlation_id = uuid.uuid4().hex[:12]
    log.error("MCP tool %s failed unexpectedly [correlation id %s]", operation, correlation_id, exc_info=exc)
    return format_error(
        ErrorCode.SYSTEM_ERROR,
        f"{operation} failed with an unexpected server error (correlation id {correlation_id}).",
    )


def _strip_wrapper(message: str, operation: str) -> str:
    """Drop the prefixes FastMCP and Galaxy's stock tools put before the original message."""
    message = message.strip()
    for prefix in (f"Error calling tool {operation!r}: ", f"{operation} failed: "):
        if message.startswith(prefix):
            message = message[len(prefix) :]
    return message.strip()


def _payload_problems(exc: "pydantic.ValidationError") -> str:
    return "; ".join(
        f"{'.'.join(str(part) for part in error['loc']) or 'value'}: {error['msg']}" for error in exc.errors()
    )


def _is_galaxy_message(exc: BaseException) -> bool:
    from galaxy.exceptions import MessageException

    return isinstance(exc, MessageException)


@contextmanager
def coded_errors(operation: str, arguments: dict[str, Any] | None = None):
    """Run a tool body so that every failure leaves it as a coded ToolError."""
    try:
        yield
    except ToolError:
        raise
    except Exception as exc:
        raise to_tool_error(exc, operation, arguments) from None


class CodedToolErrors(Middleware):
    """Every failure of a tools/call leaves as ``[CODE] message`` + ``Suggestion:`` (never twice)."""

    async def on_call_tool(self, context, call_next):
        try:
            return await call_next(context)
        except Exception as exc:
            message = context.message
            raise ToolError(coded_text(exc, message.name, message.arguments)) from None
