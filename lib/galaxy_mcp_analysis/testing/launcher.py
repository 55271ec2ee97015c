"""A Galaxy with the patch set, launched for tests the way ``make serve`` launches it.

``LaunchedGalaxy`` runs the same launcher as ``make serve`` in its own process group and
stops it by that group; ``serve_directory`` serves test files over HTTP on loopback, ``HeldFiles``
serves them only once released (an upload that stays running until then).
"""

import http.server
import json
import os
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

# The launcher's process helpers (serve/engines/base.py), also the tests'.
from galaxy_mcp_analysis.serve.engines.base import (  # noqa: F401
    free_port,
    pid_alive,
)

STARTUP_TIMEOUT_SECONDS = 300
STOP_TIMEOUT_SECONDS = 60


class LaunchedGalaxy:
    """``python -m galaxy_mcp_analysis.serve`` in a process group of its own."""

    def __init__(
        self,
        data_dir: Path,
        *,
        port: int | None = None,
        patches: bool = True,
        env: dict | None = None,
        database_url: str | None = None,
        server: list[str] | None = None,
        tool_confs: list[Path] | None = None,
        job_runner: str | None = None,
    ):
        """``server``: the command that serves (default ``make serve``'s launcher, ``-m galaxy_mcp_analysis.serve``);
        it gets the launcher's arguments (the bench passes its instrumented wrapper of that launcher)."""
        self.data_dir = Path(data_dir)
        self.port = port or free_port()
        self.patches = patches
        self.database_url = database_url  # None: the launcher's sqlite file in data_dir
        self.server = server or ["-m", "galaxy_mcp_analysis.serve"]
        self.tool_confs = list(tool_confs or [])  # served beside the bundled toolbox (make serve TOOL_CONF=...)
        self.job_runner = job_runner  # None: the launcher's default (local), as make serve
        self.env = {**os.environ, **(env or {})}
        self.env.pop("TOOL_CONF", None)  # a developer's own toolbox never leaks into a test's Galaxy
        self.env.pop("JOB_RUNNER", None)  # nor their job engine
        self.log_path = self.data_dir.parent / f"{self.data_dir.name}.log"
        self.process: subprocess.Popen | None = None
        self.info: dict[str, str] = {}
        self.leftover_processes = False

    def start(self) -> "LaunchedGalaxy":
        command = [sys.executable, *self.server, "--data-dir", str(self.data_dir)]
        command += ["--port", str(self.port)] + ([] if self.patches else ["--no-patches"])
        command += ["--database-url", self.database_url] if self.database_url else []
        command += ["--tool-conf", ",".join(map(str, self.tool_confs))] if self.tool_confs else []
        command += ["--job-runner", self.job_runner] if self.job_runner else []
        self.data_dir.parent.mkdir(parents=True, exist_ok=True)
        # A killed launcher leaves its server.json behind; it must not be read as this start's.
        (self.data_dir / "server.json").unlink(missing_ok=True)
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, env=self.env, start_new_session=True
            )
        server_json = self.data_dir / "server.json"
        deadline = time.monotonic() + STARTUP_TIMEOUT_SECONDS
        while not server_json.exists():
            if self.process.poll() is not None:
                raise RuntimeError(f"Galaxy exited with {self.process.returncode}:\n{self.log_tail()}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"Galaxy did not start in {STARTUP_TIMEOUT_SECONDS}s:\n{self.log_tail()}")
            time.sleep(0.25)
        self.info = json.loads(server_json.read_text())
        return self

    def stop(self) -> int | None:
        """SIGTERM the launcher's process group, then SIGKILL whatever is left of it.

        ``leftover_processes`` records whether anything of the group outlived a
        launcher that exited by itself (job or Celery children, for instance).
        """
        if self.process is None:
            return None
        group = self.process.pid  # start_new_session: the group id is the launcher's pid
        if self.process.poll() is None:
            os.killpg(group, signal.SIGTERM)
            try:
                self.process.wait(STOP_TIMEOUT_SECONDS)
            except subprocess.TimeoutExpired:
                pass
        self.leftover_processes = _group_alive(group)
        if self.leftover_processes:
            os.killpg(group, signal.SIGKILL)
        self.process.wait()
        return self.process.returncode

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def log_tail(self, lines: int = 60) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    @property
    def galaxy_url(self) -> str:
        return self.info["galaxy_url"]

    @property
    def mcp_url(self) -> str:
        return self.info["mcp_url"]

    @property
    def api_key(self) -> str:
        return self.info["api_key"]

    @property
    def admin_api_key(self) -> str:
        return self.info["admin_api_key"]

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


@contextmanager
def serve_directory(root: Path):
    """Serve ``root`` over HTTP on loopback, so Galaxy can fetch test files by URL; yields the base URL."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(root), **kwargs)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, name="test-file-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class HeldFiles:
    """Files served on loopback only once released: an upload of one stays running until then.
    ``fail(name)`` releases it with HTTP 500 instead, so the upload ends in error."""

    def __init__(self):
        self.files: dict[str, dict] = {}
        files = self.files

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                held = files[self.path.lstrip("/")]
                held["released"].wait(300)
                data = held["data"] if held["status"] == 200 else b"held back and failed on purpose\n"
                self.send_response(held["status"])
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def hold(self, name: str, data: bytes) -> tuple[str, threading.Event]:
        released = threading.Event()
        self.files[name] = {"data": data, "released": released, "status": 200}
        return f"http://127.0.0.1:{self.server.server_address[1]}/{name}", released

    def fail(self, name: str) -> None:
        self.files[name]["status"] = 500
        self.files[name]["released"].set()

    def close(self):
        for held in self.files.values():
            held["released"].set()
        self.server.shutdown()
        self.server.server_close()


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True
