"""A throw-away Redis for a production-shaped Galaxy's Celery broker.

``RedisServer`` runs Debian's ``redis-server`` (installed by ``.ci/install-redis``) on a free
loopback port with its own data directory, a random password and no persistence, and stops it
by its PID.
"""

import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from galaxy_mcp_analysis.testing.launcher import free_port


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
