"""Galaxy as admins run it: gravity (``galaxyctl``), gunicorn workers, job handlers, Celery on Redis, PostgreSQL.

``RedisServer`` is a throw-away Redis (Debian's ``redis-server``, installed by ``.ci/install-redis``)
on a free loopback port with its own data directory, a random password and no persistence,
stopped by its PID. ``GravityGalaxy`` writes a gravity-managed ``galaxy.yml``
(``serve.galaxy_config.write_production``: the patch set's only line is gunicorn's
``extra_args``), creates the database schema as an admin does before a first start, runs
``galaxyctl start``/``restart``/``stop``, and knows every process of the deployment: the
supervisord that gravity daemonizes, the programs it runs (gunicorn master, job handlers,
Celery worker and beat) and their children. ``stop()`` runs ``galaxyctl stop`` and then
checks, by PID and by session/process group, that nothing of it is left.

``make serve-production`` runs ``main()``: the same shape for an admin to try locally.

    python -m galaxy_mcp_analysis.testing.production --data-dir .galaxy-production --port 8080
"""

import argparse
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
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


class RedisNotInstalled(RuntimeError):
    pass


class RedisServer:
    """A throw-away Redis on 127.0.0.1: own directory and port, password, no persistence."""

    def __init__(self):
        self.binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        if not os.access(self.binary, os.X_OK):
            raise RedisNotInstalled(
                "redis-server not found; install Debian's redis-server package: sudo .ci/install-redis"
            )
        self.port = free_port()
        self.password = secrets.token_hex(16)
        self.root: Path | None = None
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        """Celery's broker URL (kombu's Redis transport), database 0."""
        return f"redis://:{self.password}@127.0.0.1:{self.port}/0"

    @property
    def log_path(self) -> Path:
        return self.root / "redis.log"

    def start(self) -> "RedisServer":
        self.root = Path(tempfile.mkdtemp(prefix="galaxy-mcp-analysis-redis-"))
        config = self.root / "redis.conf"
        config.write_text(
            "bind 127.0.0.1\n"
            f"port {self.port}\n"
            "protected-mode yes\n"
            f"requirepass {self.password}\n"
            f"dir {self.root}\n"
            "daemonize no\n"
            'save ""\n'
            "appendonly no\n"
            f"logfile {self.log_path}\n"
        )
        config.chmod(0o600)
        self.process = subprocess.Popen(
            [self.binary, str(config)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT, start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while not self.ping():
            if self.process.poll() is not None or time.monotonic() > deadline:
                log = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
                self.stop()
                raise RuntimeError(f"redis-server did not start:\n{log[-2000:]}")
            time.sleep(0.1)
        return self

    def ping(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=2) as sock:
                sock.sendall(f"AUTH {self.password}\r\nPING\r\n".encode())
                reply = b""
                while b"+PONG" not in reply and len(reply) < 200:
                    chunk = sock.recv(100)
                    if not chunk:
                        break
                    reply += chunk
                return b"+PONG" in reply
        except OSError:
            return False

    def stop(self) -> None:
        """SIGTERM by PID (Redis exits at once: nothing to save), SIGKILL if it lingers; deletes the directory."""
        if self.process is not None:
            if self.process.poll() is None:
                self.process.terminate()
                try:
                    self.process.wait(30)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()
            self.process = None
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


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
    ):
        self.data_dir = Path(data_dir).resolve()
        self.port = port or free_port()
        self.database_url = database_url
        self.broker_url = broker_url
        self.web_workers = web_workers
        self.handlers = handlers
        self.admin_api_key = admin_api_key or secrets.token_hex(16)
        self.id_secret = id_secret or secrets.token_hex(16)
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


# ---- make serve-production ----

MARKER = ".galaxy-mcp-analysis-production"


def _prepare(data_dir: Path) -> Path:
    """A fresh DATA_DIR: each start begins empty (the database is throw-away too)."""
    data_dir = data_dir.resolve()
    if data_dir.exists() and any(data_dir.iterdir()):
        if not (data_dir / MARKER).exists():
            raise SystemExit(f"error: DATA_DIR {data_dir} is not empty and was not made by serve-production; "
                             "choose another DATA_DIR.")
        shutil.rmtree(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / MARKER).write_text("made by make serve-production; emptied at its next start\n")
    return data_dir


def main(argv=None) -> int:
    from galaxy_mcp_analysis.serve import launcher
    from galaxy_mcp_analysis.testing.postgres import PostgresCluster

    parser = argparse.ArgumentParser(prog="make serve-production", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ.get("DATA_DIR") or ".galaxy-production"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT") or 8080))
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL") or None,
                        help="an empty PostgreSQL database (default: a throw-away cluster on loopback)")
    args = parser.parse_args(argv)
    launcher.check_port_free(args.port)
    data_dir = _prepare(args.data_dir)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    cluster = redis = galaxy = None
    try:
        if args.database_url:
            database_url = args.database_url
        else:
            cluster = PostgresCluster().start()
            database_url = cluster.create_database("galaxy")
        redis = RedisServer().start()
        stored = launcher.load_secrets(data_dir)
        galaxy = GravityGalaxy(data_dir / "galaxy", database_url=database_url, broker_url=redis.url, port=args.port,
                               admin_api_key=stored["admin_api_key"], id_secret=stored["id_secret"])
        print(f"starting gravity (galaxyctl start) with {galaxy.data_dir / 'galaxy.yml'} ...", flush=True)
        galaxy.start()
        api_key = launcher.ensure_demo_user(galaxy.galaxy_url, data_dir, stored)
        launcher.announce(data_dir, galaxy.galaxy_url, api_key, stored["admin_api_key"], galaxy_config.MCP_PATH)
        programs = ", ".join(f"{name} (pid {info['pid']})" for name, info in galaxy.programs().items())
        print(f"gravity programs: {programs}\nlogs: {galaxy.log_dir}\ngalaxyctl: "
              f"GALAXY_CONFIG_FILE={galaxy.config_file} {sys.prefix}/bin/galaxyctl status", flush=True)
        stop.wait()
    finally:
        if galaxy is not None:
            print("stopping (galaxyctl stop) ...", flush=True)
            leftovers = galaxy.stop()
            if leftovers:
                print(f"killed {len(leftovers)} process(es) left after galaxyctl stop", file=sys.stderr)
        if redis is not None:
            redis.stop()
        if cluster is not None:
            cluster.stop()
        (data_dir / "server.json").unlink(missing_ok=True)
        print("stopped: galaxyctl stop, then Redis" + (" and PostgreSQL" if cluster is not None else "")
              + " by PID", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
