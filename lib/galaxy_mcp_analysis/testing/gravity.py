"""Galaxy as admins run it: gravity (``galaxyctl``), gunicorn workers, job handlers, Celery, PostgreSQL.

``GravityGalaxy`` writes a gravity-managed ``galaxy.yml`` (``serve.galaxy_config.write_production``:
the patch set's only line is gunicorn's ``extra_args``), creates the database schema as an admin
does before a first start, runs ``galaxyctl start``/``restart``/``stop``, and knows every process
of the deployment: the supervisord that gravity daemonizes, the programs it runs (gunicorn master,
job handlers, Celery worker and beat) and their children. ``stop()`` runs ``galaxyctl stop`` and
then checks, by PID and by session/process group, that nothing of it is left.
"""

import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from galaxy_mcp_analysis.serve import galaxy_config
from galaxy_mcp_analysis.testing.launcher import (
    free_port,
    pid_alive,
)

STARTUP_TIMEOUT_SECONDS = 600
STOP_TIMEOUT_SECONDS = 180
#: supervisor's process states (supervisor.states.ProcessStates).
RUNNING, STOPPED, EXITED, FATAL, BACKOFF = 20, 0, 100, 200, 30


@dataclass(frozen=True)
class Seen:
    """One process of the deployment, as first seen (create_time tells a reused PID apart)."""

    pid: int
    create_time: float
    pgid: int
    command: str


class GravityGalaxy:
    """A gravity-managed Galaxy with the patch set: gunicorn (N workers), job handlers, Celery worker and beat."""

    def __init__(
        self,
        data_dir: Path,
        *,
        database_url: str,
        broker_url: str,
        port: int | None = None,
        web_workers: int = 2,
        handlers: int = 2,
        admin_api_key: str | None = None,
        id_secret: str | None = None,
        env: dict | None = None,
        job_config: dict | None = None,
    ):
        """``job_config``: a started job engine's (serve/engines; its ``environ`` goes into ``env``)."""
        self.data_dir = Path(data_dir).resolve()
        self.port = port or free_port()
        self.database_url = database_url
        self.broker_url = broker_url
        self.web_workers = web_workers
        self.handlers = handlers
        self.admin_api_key = admin_api_key or secrets.token_hex(16)
        self.id_secret = id_secret or secrets.token_hex(16)
        self.job_config = job_config
        self.env = {**os.environ, **(env or {})}
        if os.geteuid() == 0:
            # gravity refuses supervisor as root (it expects systemd there); gravity's documented
            # switch for containers, where processes run as root without systemd.
            self.env["GRAVITY_SKIP_SYSTEMD"] = "1"
        self.env.pop("GALAXY_CONFIG_FILE", None)
        self.config_file: Path | None = None
        self.seen: dict[int, Seen] = {}
        self.leftovers: list[Seen] = []
        self.supervisord_pid: int | None = None
        self.session_id: int | None = None
        self.galaxyctl_calls: list[tuple[str, int, float]] = []

    # ---- where things are ----

    @property
    def galaxy_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def mcp_url(self) -> str:
        from galaxy_mcp_analysis.serve.launcher import mcp_endpoint_path

        return self.galaxy_url + mcp_endpoint_path(galaxy_config.MCP_PATH)

    @property
    def gravity_dir(self) -> Path:
        return self.data_dir / "gravity"

    @property
    def log_dir(self) -> Path:
        return self.gravity_dir / "log"

    @property
    def supervisor_dir(self) -> Path:
        return self.gravity_dir / "supervisor"

    def log_path(self, program: str) -> Path:
        """Log of one gravity program: ``gunicorn``, ``celery``, ``celery-beat``, ``handler_0``..."""
        return self.log_dir / f"{program}.log"

    def log_text(self, program: str) -> str:
        path = self.log_path(program)
        return path.read_text(errors="replace") if path.exists() else ""

    @property
    def handler_names(self) -> list[str]:
        return [f"{galaxy_config.HANDLER_SERVICE}_{i}" for i in range(self.handlers)]

    @property
    def program_names(self) -> list[str]:
        """The gravity programs this shape runs, by their log names."""
        return ["gunicorn", "celery", "celery-beat", *self.handler_names]

    # ---- configuration and galaxyctl ----

    def write_config(self) -> Path:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.config_file = galaxy_config.write_production(
            self.data_dir,
            port=self.port,
            virtualenv=sys.prefix,
            web_workers=self.web_workers,
            handlers=self.handlers,
            broker_url=self.broker_url,
            database_url=self.database_url,
            galaxy_url=self.galaxy_url,
            id_secret=self.id_secret,
            admin_api_key=self.admin_api_key,
            job_config=self.job_config,
        )
        return self.config_file

    def create_database(self) -> None:
        """Galaxy's schema, created once before the first start (what create_db.sh does in a
        source checkout), so the processes that start together do not race to create it."""
        script = (
            "import sys\n"
            "from galaxy.model.migrations import DatabaseConfig, verify_databases_via_script\n"
            "config = DatabaseConfig(sys.argv[1], None, None)\n"
            "verify_databases_via_script(config, config, True)\n"
        )
        result = subprocess.run([sys.executable, "-c", script, self.database_url], capture_output=True, text=True,
                                timeout=600, env=self.env, cwd=self.data_dir)
        if result.returncode != 0:
            raise RuntimeError(f"creating Galaxy's database failed:\n{result.stdout[-2000:]}{result.stderr[-4000:]}")

    def galaxyctl(self, *args: str, timeout: float = STOP_TIMEOUT_SECONDS) -> subprocess.CompletedProcess:
        """``galaxyctl --config-file galaxy.yml <args>`` from the data dir; output appended to galaxyctl.log."""
        command = [str(Path(sys.prefix) / "bin" / "galaxyctl"), "--config-file", str(self.config_file), *args]
        began = time.monotonic()
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=self.env,
                                cwd=self.data_dir, stdin=subprocess.DEVNULL)
        self.galaxyctl_calls.append((" ".join(args), result.returncode, round(time.monotonic() - began, 1)))
        with open(self.data_dir / "galaxyctl.log", "a") as log:
            log.write(f"$ galaxyctl {' '.join(args)}  (exit {result.returncode})\n{result.stdout}{result.stderr}\n")
        if result.returncode != 0:
            raise RuntimeError(f"galaxyctl {' '.join(args)} failed ({result.returncode}):\n"
                               f"{result.stdout[-3000:]}{result.stderr[-3000:]}")
        return result

    # ---- supervisor: the programs and their PIDs ----

    def _supervisor(self):
        import xmlrpc.client

        from supervisor.xmlrpc import SupervisorTransport

        transport = SupervisorTransport(None, None, f"unix://{self.supervisor_dir / 'supervisor.sock'}")
        return xmlrpc.client.ServerProxy("http://127.0.0.1", transport=transport).supervisor

    def programs(self) -> dict[str, dict]:
        """supervisor's view: program name (``gunicorn``, ``handler_0``...) -> info (``pid``, ``statename``...)."""
        return {info["name"]: info for info in self._supervisor().getAllProcessInfo()}

    def _read_supervisord_pid(self) -> int | None:
        path = self.supervisor_dir / "supervisord.pid"
        try:
            return int(path.read_text().strip())
        except (OSError, ValueError):
            return None

    def gunicorn_master(self) -> int:
        return self.programs()["gunicorn"]["pid"]

    def gunicorn_workers(self) -> list[int]:
        import psutil

        return sorted(child.pid for child in psutil.Process(self.gunicorn_master()).children())

    def snapshot(self) -> dict[int, Seen]:
        """Record supervisord and every descendant (programs, gunicorn workers, job processes) by PID and group."""
        import psutil

        if self.supervisord_pid is None:
            return {}
        found = {}
        try:
            root = psutil.Process(self.supervisord_pid)
            processes = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return {}
        for process in processes:
            try:
                seen = Seen(process.pid, process.create_time(), os.getpgid(process.pid),
                            " ".join(process.cmdline())[:200])
            except (psutil.Error, ProcessLookupError):
                continue
            found[process.pid] = seen
            self.seen.setdefault(process.pid, seen)
        return found

    # ---- lifecycle ----

    def start(self) -> "GravityGalaxy":
        if self.config_file is None:
            self.write_config()
            self.create_database()
        self.galaxyctl("start", timeout=STARTUP_TIMEOUT_SECONDS)
        self.supervisord_pid = self._read_supervisord_pid()
        if self.supervisord_pid is not None:
            self.session_id = os.getsid(self.supervisord_pid)
        self.wait_until_ready()
        return self

    def restart(self) -> None:
        """``galaxyctl restart``: every program stopped and started again under the same supervisord."""
        self.snapshot()
        self.galaxyctl("restart", timeout=STARTUP_TIMEOUT_SECONDS)
        self.wait_until_ready()

    def wait_until_ready(self, timeout: float = STARTUP_TIMEOUT_SECONDS) -> None:
        """Every program RUNNING, the web workers all up, and ``/api/version`` answering."""
        deadline = time.monotonic() + timeout
        while True:
            problem = self._not_ready()
            if problem is None:
                self.snapshot()
                return
            if problem.startswith("failed"):
                raise RuntimeError(f"{problem}\n{self.logs_tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"Galaxy under gravity not ready after {timeout:.0f} s: {problem}\n{self.logs_tail()}")
            time.sleep(0.5)

    def _not_ready(self) -> str | None:
        try:
            programs = self.programs()
        except OSError as e:
            return f"supervisor not answering ({e})"
        for name in self.program_names:
            state = programs.get(name, {}).get("statename", "missing")
            if state in ("FATAL", "EXITED", "STOPPED", "missing") and name in programs:
                return f"failed: program {name} is {state}"
            if state != "RUNNING":
                return f"program {name} is {state}"
        try:
            if len(self.gunicorn_workers()) != self.web_workers:
                return "gunicorn workers still starting"
            with urllib.request.urlopen(f"{self.galaxy_url}/api/version", timeout=10):
                return None
        except (OSError, urllib.error.URLError) as e:
            return f"/api/version not answering ({e})"
        except Exception as e:  # psutil.NoSuchProcess while gunicorn replaces a worker
            return f"processes changing ({type(e).__name__})"

    def stop(self) -> list[Seen]:
        """``galaxyctl stop`` (programs, then supervisord), then whatever of the deployment is
        still alive, by PID or in supervisord's session, is listed in ``leftovers`` and SIGKILLed."""
        if self.config_file is None:
            return []
        self.snapshot()
        try:
            if self.supervisord_pid is not None and pid_alive(self.supervisord_pid):
                self.galaxyctl("stop")
        finally:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and self._alive_of_deployment():
                time.sleep(0.2)
            self.leftovers = self._alive_of_deployment()
            for process in self.leftovers:
                try:
                    os.kill(process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        return self.leftovers

    def _alive_of_deployment(self) -> list[Seen]:
        """Processes seen (same PID and start time) still running, plus any member of supervisord's session."""
        import psutil

        alive = []
        for seen in self.seen.values():
            try:
                process = psutil.Process(seen.pid)
                if process.create_time() == seen.create_time and process.status() != psutil.STATUS_ZOMBIE:
                    alive.append(seen)
            except psutil.NoSuchProcess:
                pass
        if self.session_id is not None:
            known = {seen.pid for seen in alive}
            for process in psutil.process_iter(["pid", "cmdline", "status"]):
                try:
                    if (process.pid not in known and os.getsid(process.pid) == self.session_id
                            and process.info["status"] != psutil.STATUS_ZOMBIE):
                        alive.append(Seen(process.pid, process.create_time(), os.getpgid(process.pid),
                                          " ".join(process.info["cmdline"] or [])[:200]))
                except (ProcessLookupError, PermissionError, psutil.Error):
                    pass
        return alive

    def logs_tail(self, lines: int = 40) -> str:
        parts = []
        for name in [*self.program_names, "galaxyctl"]:
            path = self.data_dir / "galaxyctl.log" if name == "galaxyctl" else self.log_path(name)
            if path.exists():
                tail = "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
                parts.append(f"---- {path.name} ----\n{tail}")
        return "\n".join(parts)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
