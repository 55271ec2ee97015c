"""Shared by the benchmarks: one launched Galaxy, a file server, timing helpers.

Benchmarks measure and print ratios measured side by side in one run; they are not
timed tests and never gate CI.
"""

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test"))

from conftest import fetch  # noqa: E402  (the tests' REST set-up helper)
from galaxy_mcp_analysis.testing import serve_directory as file_server  # noqa: E402


def median_seconds(samples: list[float]) -> float:
    return statistics.median(samples)


def timed(function, *args, **kwargs) -> tuple[float, object]:
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return time.perf_counter() - start, result


class PeakRss:
    """Peak resident memory growth of a process while the block runs.

    Uses the kernel's own high-water mark (VmHWM), reset at entry through
    /proc/PID/clear_refs, so short-lived peaks between samples are not missed.
    """

    def __init__(self, pid: int):
        self.pid = pid
        self.baseline = self.peak = 0

    def _status(self, field: str) -> int:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
        raise RuntimeError(f"{field} missing from /proc/{self.pid}/status")

    def __enter__(self):
        Path(f"/proc/{self.pid}/clear_refs").write_text("5")  # 5: reset the peak RSS to the current RSS
        self.baseline = self._status("VmRSS")
        return self

    def __exit__(self, *exc):
        self.peak = self._status("VmHWM")

    @property
    def growth(self) -> int:
        return max(0, self.peak - self.baseline)


__all__ = ["fetch", "file_server", "median_seconds", "PeakRss", "timed"]
