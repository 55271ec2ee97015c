"""The policy's rate limits counted across processes: gunicorn's workers share one count per user."""

import fcntl
import hashlib
import json
import os
import time
from collections import deque

from galaxy_mcp_analysis.core.policy import (
    Caller,
    Policy,
    RateLimiter,
    Refusal,
)
from galaxy_mcp_analysis.core.tool_facts import ToolFacts


class SharedRateLimiter(RateLimiter):
    """The rate limits' counts in one small file per user under ``directory``, read and written under an
    exclusive ``flock``: every process that shares the directory (gunicorn's workers) counts together."""

    def __init__(self, directory: str):
        super().__init__(clock=time.time)  # wall clock: the same in every process
        self.directory = directory

    def check(self, policy: Policy, caller: Caller, user_key: str, tool: ToolFacts) -> Refusal | None:
        if not policy.has_rate_limits(caller):
            return None
        os.makedirs(self.directory, exist_ok=True)
        name = hashlib.sha256(user_key.encode()).hexdigest()[:32]
        with open(os.path.join(self.directory, f"{name}.json"), "a+", encoding="utf-8") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file is closed
            handle.seek(0)
            try:
                windows = {key: deque(stamps) for key, stamps in json.loads(handle.read() or "{}").items()}
            except ValueError:  # a torn file (a process killed mid-write): start the count again
                windows = {}
            refusal = self.judge(policy, caller, tool, lambda key: windows.setdefault(key, deque()))
            handle.seek(0)
            handle.truncate()
            handle.write(json.dumps({key: list(stamps) for key, stamps in windows.items()}))
        return refusal


def counts_directory(gx_app) -> str:
    """Where the rate limits are counted: Galaxy's data directory, shared by all its web workers."""
    return os.path.join(str(gx_app.config.data_dir), "mcp_policy_counts")
