"""The audit trail's file: whole lines appended by any number of processes, rotated by size.

Every write takes an exclusive ``flock`` on ``<log>.lock`` (a file that is never rotated), checks
that its descriptor still names ``<log>`` (another process may have rotated it), rotates when the
line would take the file past ``max_bytes`` (``<log>`` -> ``<log>.1`` -> ... -> ``<log>.<backups>``,
the oldest dropped), and appends the line with one ``write`` on an ``O_APPEND`` descriptor. Gunicorn
workers, threads and several Galaxy processes sharing the file therefore never interleave or lose
lines. Descriptors are opened per process (a lock inherited across ``fork`` would be shared).
"""

import fcntl
import os
import threading

MIB = 1024 * 1024


class AuditFile:
    def __init__(self, path: str, max_bytes: int = 64 * MIB, backups: int = 5):
        self.path = os.path.abspath(path)
        self.max_bytes = max_bytes
        self.backups = backups
        self._thread_lock = threading.Lock()
        self._pid: int | None = None
        self._lock_fd = -1
        self._fd = -1

    def check(self) -> None:
        """Open (create) the log and its lock file now, so a wrong path stops start-up, not the first call."""
        with self._thread_lock:
            self._open_for_this_process()

    def write_line(self, line: str) -> None:
        data = (line.rstrip("\n") + "\n").encode()
        with self._thread_lock:
            self._open_for_this_process()
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
            try:
                self._follow_rotation()
                if self.max_bytes and os.fstat(self._fd).st_size + len(data) > self.max_bytes:
                    self._rotate()
                os.write(self._fd, data)
            finally:
                fcntl.flock(self._lock_fd, fcntl.LOCK_UN)

    def close(self) -> None:
        with self._thread_lock:
            for fd in (self._fd, self._lock_fd):
                if fd >= 0 and self._pid == os.getpid():
                    os.close(fd)
            self._fd = self._lock_fd = -1
            self._pid = None

    def _open_log(self) -> int:
        return os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)

    def _open_for_this_process(self) -> None:
        if self._pid == os.getpid():
            return
        # After a fork the inherited descriptors belong to the parent: open our own.
        self._lock_fd = os.open(self.path + ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        self._fd = self._open_log()
        self._pid = os.getpid()

    def _follow_rotation(self) -> None:
        try:
            current = os.stat(self.path)
        except FileNotFoundError:
            current = None
        mine = os.fstat(self._fd)
        if current is None or (current.st_ino, current.st_dev) != (mine.st_ino, mine.st_dev):
            os.close(self._fd)
            self._fd = self._open_log()

    def _rotate(self) -> None:
        if os.fstat(self._fd).st_size == 0:
            return  # one line larger than max_bytes: written to the empty file rather than rotated forever
        for number in range(self.backups - 1, 0, -1):
            older = f"{self.path}.{number}"
            if os.path.exists(older):
                os.replace(older, f"{self.path}.{number + 1}")
        if self.backups > 0:
            os.replace(self.path, f"{self.path}.1")
        else:
            os.unlink(self.path)
        os.close(self._fd)
        self._fd = self._open_log()
