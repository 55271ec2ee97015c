"""The error vocabulary of the patch set: stable codes and the two exceptions that carry them.

Pure: operations and cores raise these; ``galaxy_mcp_analysis.mcp.errors`` (the one mapping)
turns them, and every other failure, into the coded text an agent reads.
"""

import enum


class ErrorCode(str, enum.Enum):
    VALIDATION_ERROR = "VALIDATION_ERROR"
    NOT_FOUND = "NOT_FOUND"
    AUTHENTICATION_ERROR = "AUTHENTICATION_ERROR"
    AUTHORIZATION_ERROR = "AUTHORIZATION_ERROR"
    NOT_READY = "NOT_READY"
    CONFLICT = "CONFLICT"
    SYSTEM_ERROR = "SYSTEM_ERROR"
    FORBIDDEN = "FORBIDDEN"
    RATE_LIMITED = "RATE_LIMITED"


class InvalidInput(ValueError):
    """An argument an agent can fix; the error mapping reports it as [VALIDATION_ERROR]."""


class AnalysisError(Exception):
    """A failure the patch set diagnosed itself, with the code and the next step."""

    def __init__(self, code: ErrorCode, message: str, suggestion: str):
        super().__init__(message)
        self.code = code
        self.message = message
        self.suggestion = suggestion
