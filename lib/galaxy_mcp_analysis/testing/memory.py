"""Peak memory of a server process, for the benchmarks and the tests that bound a read's memory."""

from pathlib import Path


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
