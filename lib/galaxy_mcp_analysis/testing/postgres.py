"""A throw-away PostgreSQL cluster on 127.0.0.1 for the test pass on PostgreSQL.

``PostgresCluster().start()`` runs Debian's ``initdb`` into a fresh temporary
directory, starts the server with ``pg_ctl`` on a free loopback port (its unix
socket inside that directory, password authentication), and ``create_database``
hands out one database URL per Galaxy. ``stop()`` stops the postmaster by its
data directory and PID and deletes the directory. PostgreSQL refuses to run as
root, so as root every command runs as the ``postgres`` system user, which
Debian's ``postgresql`` package creates (``.ci/install-postgresql`` installs it).
"""

import glob
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from galaxy_mcp_analysis.testing.launcher import (
    free_port,
    pid_alive,
)

SUPERUSER = "galaxy"
STOP_TIMEOUT_SECONDS = 60
#: A test cluster loses nothing worth keeping when the machine crashes; skip the flushes.
SERVER_SETTINGS = {
    "listen_addresses": "127.0.0.1",
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "max_connections": "200",
}


class PostgresNotInstalled(RuntimeError):
    pass


def server_bindir() -> Path:
    """The newest ``/usr/lib/postgresql/<major>/bin`` holding initdb and pg_ctl."""
    found = sorted(
        (Path(path).parent for path in glob.glob("/usr/lib/postgresql/*/bin/initdb")),
        key=lambda bindir: int(bindir.parent.name) if bindir.parent.name.isdigit() else 0,
    )
    if not found or not (found[-1] / "pg_ctl").exists():
        raise PostgresNotInstalled(
            "PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin; "
            "install Debian's postgresql package: sudo .ci/install-postgresql"
        )
    return found[-1]


class PostgresCluster:
    def __init__(self):
        self.bindir = server_bindir()
        self.port = free_port()
        self.password = secrets.token_hex(16)
        self.root: Path | None = None
        self.pid: int | None = None
        self._as_postgres = os.geteuid() == 0

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    @property
    def log_path(self) -> Path:
        return self.root / "postgres.log"

    def _run(self, program: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        command = [str(self.bindir / program), *args]
        if self._as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        result = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=self.root,
            env={**os.environ, "PGPASSWORD": self.password, "LC_ALL": "C"},
        )
        if result.returncode != 0:
            raise RuntimeError(f"{program} {' '.join(args)} failed ({result.returncode}):\n{result.stdout}{result.stderr}")
        return result

    def start(self) -> "PostgresCluster":
        self.root = Path(tempfile.mkdtemp(prefix="galaxy-mcp-analysis-pg-"))
        password_file = self.root / "password"
        password_file.write_text(self.password + "\n")
        if self._as_postgres:
            shutil.chown(self.root, "postgres", "postgres")
            shutil.chown(password_file, "postgres", "postgres")
        password_file.chmod(0o600)
        try:
            self._run(
                "initdb", "--pgdata", str(self.data_dir), "--username", SUPERUSER, "--pwfile", str(password_file),
                "--auth", "scram-sha-256", "--encoding", "UTF8", "--no-locale", "--no-sync",
            )
            options = " ".join(f"-c {key}={value}" for key, value in SERVER_SETTINGS.items())
            options += f" -p {self.port} -k {self.root}"
            self._run("pg_ctl", "start", "--pgdata", str(self.data_dir), "--log", str(self.log_path),
                      "--wait", "--timeout", "120", "--options", options)
            self.pid = int((self.data_dir / "postmaster.pid").read_text().split()[0])
        except BaseException:
            self.stop()
            raise
        return self

    def create_database(self, name: str) -> str:
        """A new, empty database; returns its SQLAlchemy URL (psycopg2, over TCP on loopback)."""
        self._run("createdb", "--host", "127.0.0.1", "--port", str(self.port), "--username", SUPERUSER, name)
        return f"postgresql://{SUPERUSER}:{self.password}@127.0.0.1:{self.port}/{name}"

    def log_tail(self, lines: int = 40) -> str:
        if self.root is None or not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        """Fast shutdown (disconnects clients), then make sure the postmaster PID is gone."""
        if self.root is None:
            return
        if self.pid is not None:
            try:
                self._run("pg_ctl", "stop", "--pgdata", str(self.data_dir), "--mode", "fast", "--wait",
                          "--timeout", str(STOP_TIMEOUT_SECONDS), timeout=STOP_TIMEOUT_SECONDS + 10)
            except (RuntimeError, subprocess.TimeoutExpired):
                pass  # the PID check below decides
            deadline = time.monotonic() + 10
            while pid_alive(self.pid) and time.monotonic() < deadline:
                time.sleep(0.1)
            if pid_alive(self.pid):
                os.kill(self.pid, signal.SIGKILL)
            self.pid = None
        shutil.rmtree(self.root, ignore_errors=True)
        self.root = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

