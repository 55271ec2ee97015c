"""What every job engine gives the launcher: a started engine (``RunningEngine``) and its Galaxy job configuration.

An engine class has ``available() -> str | None`` (None when its programs are installed, else one line
naming the ``.ci/install-*`` script) and ``EngineClass(root).start() -> RunningEngine``; ``root`` is a
directory of its own (its configuration, pid and log files).
"""

import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable


@dataclass
class RunningEngine:
    """A started engine. ``job_config`` is Galaxy's inline job configuration (``runners``, ``execution``:
    ``default`` and ``environments``), merged by the launcher into galaxy.yml; ``environ`` is what Galaxy's
    processes need in their environment to reach the engine (Slurm: ``SLURM_CONF``)."""

    name: str
    job_config: dict
    job_runner_log: Path | None = None
    environ: dict[str, str] = field(default_factory=dict)
    stopper: Callable[[], None] | None = None
    details: dict = field(default_factory=dict)

    def stop(self) -> None:
        """Stop every process the engine started, by pid or process group; safe to call twice."""
        stopper, self.stopper = self.stopper, None
        if stopper is not None:
            stopper()

    def describe(self) -> dict:
        """What ``server.json`` and the banner say about the engine."""
        return {
            "job_runner": self.name,
            "job_runner_log": str(self.job_runner_log) if self.job_runner_log else None,
            **self.details,
        }


class EngineNotAvailable(RuntimeError):
    """The engine's programs are not installed (the message names the .ci/install-* script)."""


def stop_process(process: subprocess.Popen | None, timeout: float = 20) -> None:
    """SIGTERM a process group started with ``start_new_session=True``, SIGKILL what lingers."""
    if process is None:
        return
    if process.poll() is None:
        _signal_group(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            pass
    _signal_group(process.pid, signal.SIGKILL)  # anything of the group left (its children)
    process.wait()


def stop_pid(pid: int, timeout: float = 20) -> None:
    """SIGTERM one pid (a daemon that forked away from us), SIGKILL if it outlives ``timeout``."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not pid_running(pid):
            return
        time.sleep(0.1)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def free_port() -> int:
    """A free TCP port on 127.0.0.1 (the engines' private ports, the tests' servers)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def pid_alive(pid: int) -> bool:
    """Whether a process with this PID exists (signal 0; another user's process counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _signal_group(group: int, signum: int) -> None:
    try:
        os.killpg(group, signum)
    except ProcessLookupError:
        pass


def pid_running(pid: int) -> bool:
    """Whether ``pid`` runs: a zombie (exited, not yet reaped by its parent) counts as gone."""
    if not pid_alive(pid):
        return False
    try:  # a zombie child of ours counts as gone
        return not Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z")
    except (OSError, IndexError):
        return False


def wait_for(check: Callable[[], bool], timeout: float, what: str, log: Path | None = None) -> None:
    """Poll ``check`` until true; a RuntimeError naming ``what`` (and the log's tail) after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            tail = log.read_text(errors="replace")[-2000:] if log and log.exists() else ""
            raise RuntimeError(f"{what} did not come up in {timeout:.0f}s" + (f":\n{tail}" if tail else ""))
        time.sleep(0.2)
