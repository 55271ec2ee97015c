"""The admin's policy file: where it is, its check at start-up, and its re-reading when it changes.

A rule may name only the MCP tools this server serves (``tools``: the names of the facts table,
``tools.TOOL_FACTS``, which ``test_every_tool.py`` holds equal to a live ``tools/list``) or a
class; a misspelt name is an error like an unknown key: at start-up it stops Galaxy, naming the
line and the name; on a re-read every call is refused until the file is fixed (logged).
"""

import logging
import os
import threading
from collections.abc import Collection

from galaxy_mcp_analysis.core.errors import (
    AnalysisError,
    ErrorCode,
)
from galaxy_mcp_analysis.core.policy import (
    load_policy,
    Policy,
    PolicyError,
)
from galaxy_mcp_analysis.core.settings import Settings

log = logging.getLogger(__name__)

#: The galaxy.yml option (under ``galaxy:``) used when GALAXY_MCP_ANALYSIS_POLICY_FILE is not set.
POLICY_FILE_OPTION = "mcp_analysis_policy_file"


class PolicySource:
    """The policy file, re-read when its modification time or size changes; absent means no policy."""

    def __init__(self, path: str | None, tools: Collection[str]):
        self.path = path
        self.tools = frozenset(tools)
        self._lock = threading.Lock()
        self._stamp: tuple | None = ("unread",)
        self._policy: Policy | None = None
        self._error: str | None = None

    def current(self) -> Policy | None:
        if not self.path:
            return None
        try:
            status = os.stat(self.path)
            stamp: tuple | None = (status.st_mtime_ns, status.st_size, status.st_ino)
        except FileNotFoundError:
            stamp = None
        with self._lock:
            if stamp != self._stamp:
                self._reload(stamp)
            if self._error:
                raise AnalysisError(
                    ErrorCode.FORBIDDEN,
                    f"rule policy-file: the server's policy file is invalid ({self._error}); "
                    "every call is refused until the Galaxy admin fixes it.",
                    "Tell the Galaxy admin; nothing was done.",
                )
            return self._policy

    def _reload(self, stamp) -> None:
        self._stamp = stamp
        if stamp is None:
            self._policy, self._error = None, None
            return
        try:
            self._policy, self._error = load_policy(self.path, self.tools), None
            log.info("galaxy-mcp-analysis: policy file %s loaded (%d rules)", self.path, len(self._policy.rules))
        except PolicyError as error:
            self._policy = None
            self._error = str(error).removeprefix(self.path).lstrip(": ") or "unreadable"
            log.error("galaxy-mcp-analysis: %s; every MCP call is refused until it is fixed", error)


def policy_path(settings: Settings, gx_app=None) -> str | None:
    """The variable's file (``settings.policy_file``), else galaxy.yml's option, else None."""
    path = settings.policy_file
    if not path and gx_app is not None:
        path = str(gx_app.config.config_dict.get(POLICY_FILE_OPTION) or "").strip()
    return path or None


def admin_rules_line(policy_file: str | None, audit_target: str, tools: Collection[str]) -> str:
    """The start-up line saying which admin rules are in force (one per serving process)."""
    if not policy_file:
        policy = "no policy file (every tool for every user)"
    elif not os.path.exists(policy_file):
        policy = f"policy file {policy_file} (absent: no rules until it exists; read when it changes)"
    else:
        rules = load_policy(policy_file, tools).rules
        policy = f"policy file {policy_file} ({len(rules)} rules; read again when it changes)"
    return f"galaxy-mcp-analysis admin rules: {policy}; audit trail: {audit_target or 'off'}"


def check_policy_file(path: str | None, tools: Collection[str]) -> None:
    """Start-up: an existing but invalid policy file (a misspelt tool or class among them) stops Galaxy,
    naming the line and the field."""
    if path and os.path.exists(path):
        load_policy(path, tools)
