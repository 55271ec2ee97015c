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
import time
import urllib.error
import urllib.request
from pathlib import Path

import yaml

from galaxy_mcp_analysis.serve.engines import RunningEngine
from galaxy_mcp_analysis.testing.launcher import free_port

log = logging.getLogger(__name__)

#: Where ``.ci/install-pulsar`` puts Pulsar: beside this checkout's lib/, unless the variable says otherwise.
VENV_VARIABLE = "GALAXY_MCP_ANALYSIS_PULSAR_VENV"
CHECKOUT = Path(__file__).resolve().parents[4]
START_TIMEOUT_SECONDS = 90
STOP_TIMEOUT_SECONDS = 20
#: Galaxy's runner id for Pulsar in the job configuration (and the destination's id).
RUNNER_ID = "pulsar"
#: Tools that stay on Galaxy's local runner: uploads (``__DATA_FETCH__``) read what a person sent to
#: Galaxy itself (a pasted text, a file in Galaxy's upload store) and write Galaxy's objects directly.
LOCAL_TOOLS = ("__DATA_FETCH__", "upload1")

# pulsar-serve (the ``pulsar -m gunicorn`` mode) configures no logging for Pulsar's own loggers, so
# its INFO lines (a job's submission, its status changes, its clean-up) would be dropped; this
# configures them first, then runs Pulsar's own gunicorn launcher unchanged.
_BOOT = (
    "import logging, sys\n"
    "logging.basicConfig(level=logging.INFO, format='%(asctime)s %(levelname)s [%(name)s] %(message)s')\n"
    "from pulsar.scripts.serve import main\n"
    "sys.exit(main())\n"
)


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
        self.root = Path(root)
        self.directory = self.root / "pulsar"

    @property
    def log_path(self) -> Path:
        return self.directory / "pulsar.log"

    def start(self) -> "PulsarRunning":
        if reason := self.available():
            raise RuntimeError(reason)
        settings = self._configure()
        env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env["PULSAR_CONFIG_DIR"] = str(self.directory)
        with open(self.log_path, "ab") as out:
            process = subprocess.Popen(
                [str(venv() / "bin" / "python"), "-c", _BOOT, str(self.directory / "server.ini")],
                cwd=self.directory, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                env=env, start_new_session=True,
            )
        running = PulsarRunning(
            name=self.name,
            job_config=job_config(settings["url"], settings["token"]),
            job_runner_log=self.log_path,
            process=process,
            url=settings["url"],
            directory=self.directory,
        )
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while not running.answers():
            if process.poll() is not None or time.monotonic() > deadline:
                running.stop()
                tail = self.log_path.read_text(errors="replace")[-3000:]
                raise RuntimeError(f"Pulsar did not start on {settings['url']}:\n{tail}")
            time.sleep(0.2)
        return running

    def _configure(self) -> dict:
        """The server's port and token (kept across restarts), its configuration written by ``pulsar-config``."""
        self.directory.mkdir(parents=True, exist_ok=True)
        self.directory.chmod(0o700)  # the token is in app.yml
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


class PulsarRunning(RunningEngine):
    """A started Pulsar server; ``stop`` ends its process group and the jobs it started."""

    def __init__(self, *, process: subprocess.Popen, url: str, directory: Path, **fields):
        super().__init__(**fields)
        self.process = process
        self.url = url
        self.directory = directory

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
            server = psutil.Process(self.process.pid)
            return [child for child in server.children(recursive=True) if os.getpgid(child.pid) != self.process.pid]
        except (psutil.NoSuchProcess, ProcessLookupError):
            return []

    def stop(self) -> None:
        if self.process.poll() is not None:
            return
        job_groups = set()
        for child in self.job_processes():
            try:
                job_groups.add(os.getpgid(child.pid))
            except ProcessLookupError:
                pass
        group = self.process.pid  # start_new_session: the group id is the server's pid
        _signal_group(group, signal.SIGTERM)
        try:
            self.process.wait(STOP_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            pass
        for job_group in job_groups | {group}:
            _signal_group(job_group, signal.SIGKILL)
        self.process.wait()

    def describe(self) -> dict:
        return {"url": self.url, "directory": str(self.directory), "pid": self.process.pid}


def _signal_group(group: int, signum: int) -> None:
    try:
        os.killpg(group, signum)
    except ProcessLookupError:
        pass
