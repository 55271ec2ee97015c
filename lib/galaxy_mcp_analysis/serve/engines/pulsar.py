"""Pulsar: a local ``pulsar-app`` server that Galaxy reaches through its ``pulsar_rest`` runner.

Pulsar lives in its own virtualenv (``.ci/install-pulsar``: ``.venv-pulsar`` in the checkout, or
``GALAXY_MCP_ANALYSIS_PULSAR_VENV``); Galaxy keeps only its client library (pulsar-galaxy-lib).
``pulsar-config`` writes the server's configuration into a private directory: 127.0.0.1, a free
port, a random private token, its own staging and persistence directories. Galaxy stages every
input and output over HTTP (``default_file_action: transfer``), so Pulsar never sees Galaxy's
job directory. The server runs in its own process group and is stopped by that group, together
with the jobs it started (Pulsar gives each job a process group of its own).

The configuration (port, token) is kept in the directory: starting the engine again on the same
root is a restart of the same Pulsar, which recovers the jobs it had accepted.
"""

import json
import logging
import os
import secrets
import signal
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import yaml

from galaxy_mcp_analysis.serve.engines.base import (
    free_port,
    RunningEngine,
    wait_for,
)

log = logging.getLogger(__name__)

#: Where ``.ci/install-pulsar`` puts Pulsar: beside this checkout's lib/, unless the variable says otherwise.
VENV_VARIABLE = "GALAXY_MCP_ANALYSIS_PULSAR_VENV"
CHECKOUT = Path(__file__).resolve().parents[4]
START_TIMEOUT_SECONDS = 120
STOP_TIMEOUT_SECONDS = 20
#: The server's pid, in its directory: a restart (or an admin) finds the running server by it.
PID_FILE = "server.pid"
#: Galaxy's runner id for Pulsar in the job configuration (and the destination's id).
RUNNER_ID = "pulsar"
#: Tools that stay on Galaxy's local runner: uploads read what a person sent to Galaxy itself (a pasted
#: text, a file in Galaxy's upload store) and run Galaxy's own Python code, which a Pulsar host lacks.
#: With Celery on (this shape) ``/api/tools/fetch`` uploads are Celery tasks and reach no runner at all;
#: this keeps the legacy ``upload1`` and a Galaxy without Celery off Pulsar too.
LOCAL_TOOLS = ("__DATA_FETCH__", "upload1")

#: Pulsar's server, started by Pulsar's interpreter with its logging on and its lost jobs said (pulsar_boot.py).
BOOT_SCRIPT = Path(__file__).with_name("pulsar_boot.py")


def venv() -> Path:
    return Path(os.environ.get(VENV_VARIABLE) or CHECKOUT / ".venv-pulsar")


class PulsarEngine:
    name = RUNNER_ID

    @classmethod
    def available(cls) -> str | None:
        missing = [tool for tool in ("python", "pulsar-config", "gunicorn") if not (venv() / "bin" / tool).exists()]
        if missing:
            return f"Pulsar is not installed in {venv()} (no {', '.join(missing)}): run .ci/install-pulsar"
        return None

    def __init__(self, root: Path):
        self.directory = Path(root)

    @property
    def log_path(self) -> Path:
        return self.directory / "pulsar.log"

    def start(self) -> RunningEngine:
        if reason := self.available():
            raise RuntimeError(reason)
        settings = self._configure()
        env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env["PULSAR_CONFIG_DIR"] = str(self.directory)
        with open(self.log_path, "ab") as out:
            process = subprocess.Popen(
                [str(venv() / "bin" / "python"), str(BOOT_SCRIPT), str(self.directory / "server.ini")],
                cwd=self.directory, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                env=env, start_new_session=True,
            )
        (self.directory / PID_FILE).write_text(str(process.pid))
        server = PulsarServer(self.directory, settings["url"], process)

        def up() -> bool:
            if process.poll() is not None:
                raise RuntimeError(f"Pulsar exited with {process.returncode}: see {self.log_path}")
            return server.answers()

        try:
            wait_for(up, START_TIMEOUT_SECONDS, f"Pulsar on {settings['url']}", self.log_path)
        except BaseException:
            server.stop()
            raise
        return self.running(settings, server)

    def running(self, settings: dict | None = None, server: "PulsarServer | None" = None) -> RunningEngine:
        """The engine started on this root, by ``start`` here or by another process (found by its pid file)."""
        settings = settings or json.loads((self.directory / "engine.json").read_text())
        server = server or PulsarServer(self.directory, settings["url"])
        return RunningEngine(
            name=self.name,
            job_config=job_config(settings["url"], settings["token"]),
            job_runner_log=self.log_path,
            stopper=server.stop,
            details={"pulsar_url": settings["url"], "pulsar_directory": str(self.directory)},
        )

    def _configure(self) -> dict:
        """The server's port and token (kept across restarts), its configuration written by ``pulsar-config``."""
        self.directory.mkdir(parents=True, exist_ok=True)
        self.directory.chmod(0o700)  # the token is in app.yml and engine.json
        settings_file = self.directory / "engine.json"
        if settings_file.exists():
            settings = json.loads(settings_file.read_text())
        else:
            port = free_port()
            settings = {"port": port, "token": secrets.token_hex(16), "url": f"http://127.0.0.1:{port}/"}
            settings_file.write_text(json.dumps(settings))
            settings_file.chmod(0o600)
        subprocess.run(
            [str(venv() / "bin" / "pulsar-config"), "--directory", str(self.directory), "--host", "127.0.0.1",
             "--port", str(settings["port"]), "--private_token", settings["token"], "--no_logging", "--force"],
            check=True, capture_output=True, text=True,
        )
        app_config = self.directory / "app.yml"
        app = yaml.safe_load(app_config.read_text()) or {}
        app.update(
            staging_directory=str(self.directory / "staging"),
            persistence_directory=str(self.directory / "persisted_data"),
            # Two jobs at a time, as the local runner's machine allows (2 cores); the rest wait queued.
            managers={"_default_": {"type": "queued_python", "num_concurrent_jobs": 2}},
        )
        app_config.write_text(yaml.safe_dump(app))
        app_config.chmod(0o600)
        return settings


def job_config(url: str, token: str) -> dict:
    """Galaxy's job configuration: every tool on Pulsar, uploads on the local runner (LOCAL_TOOLS)."""
    return {
        "runners": {
            "local": {"load": "galaxy.jobs.runners.local:LocalJobRunner", "workers": 4},
            RUNNER_ID: {"load": "galaxy.jobs.runners.pulsar:PulsarRESTJobRunner", "workers": 4},
        },
        "execution": {
            "default": RUNNER_ID,
            "environments": {
                RUNNER_ID: {
                    "runner": RUNNER_ID,
                    "url": url,
                    "private_token": token,
                    # Galaxy sends inputs to Pulsar and fetches outputs back over HTTP: no shared directory.
                    "default_file_action": "transfer",
                    # Metadata is set on Galaxy's side after the outputs are back (Celery, as every job).
                    "remote_metadata": False,
                    # Tools run with what the Pulsar host has on PATH (no Conda or containers here).
                    "dependency_resolution": "none",
                },
                "local": {"runner": "local"},
            },
        },
        "tools": [{"id": tool, "environment": "local"} for tool in LOCAL_TOOLS],
    }


class PulsarServer:
    """The Pulsar server of a directory (its own process group) and the jobs it runs (a process group each).

    The server is the one the directory's pid file names: a restart on the same directory (a test's, an
    admin's) replaces it, and the launcher's stop then ends the server that runs, not the first one."""

    def __init__(self, directory: Path, url: str, process: subprocess.Popen | None = None):
        self.directory = directory
        self.url = url
        self.process = process  # the server this process started, reaped on stop

    @property
    def pid(self) -> int:
        return int((self.directory / PID_FILE).read_text())

    def answers(self) -> bool:
        try:
            with urllib.request.urlopen(self.url, timeout=5):
                return True
        except urllib.error.HTTPError as e:
            return e.code == 404  # Pulsar's router: no route at "/", so the application is up
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return False

    def job_processes(self) -> list:
        """The processes of the jobs Pulsar runs now (each in a process group of its own)."""
        import psutil

        try:
            children = psutil.Process(self.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return []
        return [child for child in children if _group_of(child.pid) not in (None, self.pid)]

    def stop(self) -> None:
        """SIGTERM the server's group, then SIGKILL what is left of it and of its jobs' groups."""
        import psutil

        pid = self.pid
        try:
            server = psutil.Process(pid)
        except psutil.NoSuchProcess:
            server = None
        if server is not None:
            job_groups = {_group_of(child.pid) for child in self.job_processes()} - {None}
            _signal_group(pid, signal.SIGTERM)  # start_new_session: the group id is the server's pid
            try:
                server.wait(STOP_TIMEOUT_SECONDS)  # reaps it too when this process started it
            except psutil.TimeoutExpired:
                pass
            for group in job_groups | {pid}:
                _signal_group(group, signal.SIGKILL)
        if self.process is not None:
            self.process.wait()


def _group_of(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return None


def _signal_group(group: int, signum: int) -> None:
    try:
        os.killpg(group, signum)
    except ProcessLookupError:
        pass
