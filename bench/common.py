"""Shared by the benchmarks: one launched Galaxy, a file server, timing helpers.

Benchmarks measure and print ratios measured side by side in one run; they are not
timed tests and never gate CI.
"""

import math
import socket
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test"))

from conftest import (  # noqa: E402  (the tests' REST set-up helpers)
    fetch,
    wait_for_dataset,
)
from galaxy_mcp_analysis.testing import rest  # noqa: E402
from galaxy_mcp_analysis.testing import serve_directory as file_server  # noqa: E402
from galaxy_mcp_analysis.testing.memory import PeakRss  # noqa: E402  (the tests measure memory the same way)


def median_seconds(samples: list[float]) -> float:
    return statistics.median(samples)


def percentile(samples: list[float], fraction: float) -> float:
    """Nearest-rank percentile (p95: ``fraction=0.95``) of a non-empty sample."""
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


def wait_for_job(galaxy, key: str, job_id: str, timeout: float = 120) -> None:
    """Untimed, between timed calls: a job (and its metadata step) left running takes the CPU from
    whichever call comes next, on either side of a comparison."""
    from galaxy.model import Job  # the bench runs in Galaxy's virtualenv

    finished = {state.value for state in Job.terminal_states}
    deadline = time.monotonic() + timeout
    while rest(galaxy.galaxy_url, f"/api/jobs/{job_id}", key)["state"] not in finished:
        if time.monotonic() > deadline:
            raise AssertionError(f"job {job_id} not finished after {timeout} s")
        time.sleep(0.1)


def wait_for_invocation(galaxy, key: str, invocation_id: str, timeout: float = 120) -> None:
    """``wait_for_job`` for every job of a workflow invocation, once Galaxy's scheduler has made them."""
    deadline = time.monotonic() + timeout
    while rest(galaxy.galaxy_url, f"/api/invocations/{invocation_id}", key)["state"] in ("new", "ready"):
        if time.monotonic() > deadline:
            raise AssertionError(f"invocation {invocation_id} not scheduled after {timeout} s")
        time.sleep(0.1)
    for job in rest(galaxy.galaxy_url, f"/api/jobs?invocation_id={invocation_id}", key):
        wait_for_job(galaxy, key, job["id"], timeout)


def timed(function, *args, **kwargs) -> tuple[float, object]:
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return time.perf_counter() - start, result


class ByteCountingProxy:
    """A loopback TCP relay in front of a server that counts the bytes it carries.

    "Bytes moved" are then measured on the wire (HTTP headers, MCP envelopes and
    bodies included) rather than taken from what a client says it received.
    ``reset()`` zeroes the counters; ``moved()`` returns ``(to_server, from_server)``.
    """

    CHUNK = 1024 * 1024

    def __init__(self, upstream_url: str):
        host_port = upstream_url.split("//", 1)[1].split("/", 1)[0]
        host, port = host_port.rsplit(":", 1)
        self.upstream = (host, int(port))
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._lock = threading.Lock()
        self._counts = [0, 0]
        self._closed = False
        threading.Thread(target=self._accept, name="bench-proxy", daemon=True).start()

    def _accept(self):
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.upstream)
            threading.Thread(target=self._pump, args=(client, server, 0), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, 1), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, direction: int):
        try:
            while chunk := source.recv(self.CHUNK):
                with self._lock:
                    self._counts[direction] += len(chunk)
                sink.sendall(chunk)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def reset(self):
        with self._lock:
            self._counts = [0, 0]

    def moved(self) -> tuple[int, int]:
        with self._lock:
            return self._counts[0], self._counts[1]

    def close(self):
        self._closed = True
        self._listener.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def write_tabular(path, size_bytes: int) -> int:
    """A BED-like tabular file of about ``size_bytes`` (whole 20,000-row blocks); returns its size."""
    rows = "".join(f"chr{i % 22 + 1}\t{i * 50}\t{i * 50 + 49}\tfeature_{i}\t{i % 1000}\t+\n" for i in range(20_000))
    block = rows.encode()
    with open(path, "wb") as out:
        written = 0
        while written < size_bytes:
            out.write(block)
            written += len(block)
    return written


def upload_by_url(galaxy, history_id: str, workdir: Path, name: str) -> dict:
    """Upload ``workdir/name`` into ``history_id`` by URL from a loopback file server; waits for ``ok``."""
    with file_server(workdir) as base:
        started = fetch(galaxy, galaxy.api_key, history_id, {"src": "url", "url": f"{base}/{name}", "ext": "tabular"},
                        wait=False)
        dataset = wait_for_dataset(galaxy, galaxy.api_key, started["id"], timeout=1800)
    if dataset["state"] != "ok":
        raise RuntimeError(f"upload of {name} ended in state {dataset['state']}: {dataset}")
    return dataset


__all__ = [
    "ByteCountingProxy",
    "fetch",
    "file_server",
    "median_seconds",
    "PeakRss",
    "percentile",
    "timed",
    "upload_by_url",
    "write_tabular",
]
