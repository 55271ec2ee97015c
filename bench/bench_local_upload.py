"""A local file into Galaxy: create_upload_url + one streamed PUT vs Galaxy's own upload APIs, side by side.

The same file (``--local-upload-mib``, 200 MiB by default) each way, interleaved and rotated:
- ``upload_url``: create_upload_url (MCP), then the file's bytes in one PUT to its URL (streamed from disk);
- ``fetch_multipart``: POST /api/tools/fetch with the file as a multipart part (Galaxy's one-request upload API);
- ``tus``: Galaxy's resumable upload as its web client does (POST /api/upload/resumable_upload/, one PATCH with the
  whole file), then POST /api/tools/fetch naming the session.
Each is timed to the API's answer (the bytes received, the job queued) and to the dataset's ``ok``. Meanwhile the
resident memory of the Galaxy server's whole process group is sampled every 20 ms: the peak growth over the
baseline says whether the body is held in memory (a 200 MiB body would show as about 200 MiB).
"""

import base64
import os
import threading
import time
from pathlib import Path

import httpx

from common import median_seconds
from galaxy_mcp_analysis.testing import rest

TIMEOUT = 600
TERMINAL = {"ok", "error", "failed_metadata", "discarded", "deferred", "paused"}
MIB = 1 << 20


class GroupRss:
    """Peak summed RSS growth of every process in a process group, sampled (the server, its Celery and job
    processes alike)."""

    def __init__(self, group: int, interval: float = 0.02):
        self.group, self.interval = group, interval
        self.baseline = self.peak = 0
        self._stop = threading.Event()

    def total(self) -> int:
        size = 0
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                if os.getpgid(int(entry)) != self.group:
                    continue
                with open(f"/proc/{entry}/statm") as statm:
                    size += int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            except (OSError, ValueError):
                continue
        return size

    def _sample(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, self.total())
            time.sleep(self.interval)

    def __enter__(self):
        self.baseline = self.peak = self.total()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    @property
    def growth_mib(self) -> float:
        return max(0, self.peak - self.baseline) / MIB


def _chunks(path: Path):
    with open(path, "rb") as handle:
        while chunk := handle.read(MIB):
            yield chunk


def run(galaxy, mcp, workdir: Path, size_mib: int, reps: int) -> dict:
    key, gx = galaxy.api_key, galaxy.galaxy_url
    history_id = mcp.call_ok("create_history", name="bench-local-upload", api_key=key)["id"]
    path = Path(workdir) / f"local-{size_mib}mib.bin"
    if not path.exists() or path.stat().st_size != size_mib * MIB:
        with open(path, "wb") as handle:
            for _ in range(size_mib):
                handle.write(os.urandom(MIB))
    size = path.stat().st_size
    client = httpx.Client(timeout=TIMEOUT, headers={"x-api-key": key})

    def upload_url() -> str:
        answer = mcp.call_ok("create_upload_url", history_id=history_id, name=path.name, file_type="data", api_key=key)
        response = client.put(answer["upload_url"], content=_chunks(path), headers={"Content-Length": str(size),
                                                                                   **answer["headers"]})
        response.raise_for_status()
        return response.json()["dataset_id"]

    def fetch_multipart() -> str:
        with open(path, "rb") as handle:
            response = client.post(f"{gx}/api/tools/fetch", data={
                "history_id": history_id,
                "targets": '[{"destination": {"type": "hdas"}, "elements": [{"src": "files", "ext": "data", '
                           f'"name": "{path.name}"}}]}}]'}, files={"files_0|file_data": (path.name, handle)})
        response.raise_for_status()
        return response.json()["outputs"][0]["id"]

    def tus() -> str:
        created = client.post(f"{gx}/api/upload/resumable_upload/", headers={
            "Tus-Resumable": "1.0.0", "Upload-Length": str(size),
            "Upload-Metadata": "filename " + base64.b64encode(path.name.encode()).decode()})
        created.raise_for_status()
        location = created.headers["location"]
        location = location if location.startswith("http") else f"{gx}{location}"
        patched = client.patch(location, content=_chunks(path), headers={
            "Tus-Resumable": "1.0.0", "Upload-Offset": "0", "Content-Type": "application/offset+octet-stream",
            "Content-Length": str(size)})
        patched.raise_for_status()
        session_id = location.rstrip("/").rsplit("/", 1)[1]
        fetched = rest(gx, "/api/tools/fetch", key, {
            "history_id": history_id, "files_0|file_data": {"session_id": session_id, "name": path.name},
            "targets": [{"destination": {"type": "hdas"}, "elements": [{"src": "files", "ext": "data",
                                                                         "name": path.name}]}]})
        return fetched["outputs"][0]["id"]

    def until_ok(dataset_id: str) -> str:
        deadline = time.monotonic() + TIMEOUT
        while (state := rest(gx, f"/api/datasets/{dataset_id}", key)["state"]) not in TERMINAL:
            if time.monotonic() > deadline:
                break
            time.sleep(0.2)
        return state

    ways = {"upload_url": upload_url, "fetch_multipart": fetch_multipart, "tus": tus}
    answered: dict[str, list[float]] = {name: [] for name in ways}
    to_ok: dict[str, list[float]] = {name: [] for name in ways}
    memory: dict[str, list[float]] = {name: [] for name in ways}
    not_ok: list[str] = []
    names = list(ways)
    for rep in range(reps):
        for name in names[rep % 3:] + names[:rep % 3]:
            with GroupRss(os.getpgid(galaxy.process.pid)) as rss:
                start = time.perf_counter()
                dataset_id = ways[name]()
                answered[name].append(time.perf_counter() - start)
                state = until_ok(dataset_id)
                to_ok[name].append(time.perf_counter() - start)
            memory[name].append(rss.growth_mib)
            if state != "ok":
                not_ok.append(f"{name}: {state}")
            rest(gx, f"/api/datasets/{dataset_id}?purge=true", key, method="DELETE")
    client.close()
    results = {"size_mib": size_mib, "reps": reps, "not_ok": not_ok}
    for name in ways:
        results[f"{name}_answer_s"] = median_seconds(answered[name])
        results[f"{name}_ok_s"] = median_seconds(to_ok[name])
        results[f"{name}_peak_rss_growth_mib"] = max(memory[name])
    for other in ("fetch_multipart", "tus"):
        results[f"answer_over_{other}"] = results["upload_url_answer_s"] / results[f"{other}_answer_s"]
        results[f"ok_over_{other}"] = results["upload_url_ok_s"] / results[f"{other}_ok_s"]
    print(f"  a {size_mib} MiB local file, median of {reps}: answered / ok / peak RSS growth of Galaxy's processes")
    for name in ways:
        print(f"    {name:16} {results[f'{name}_answer_s']:6.2f} s / {results[f'{name}_ok_s']:6.2f} s / "
              f"{results[f'{name}_peak_rss_growth_mib']:6.0f} MiB")
    print(f"  -> upload URL over Galaxy's multipart fetch: answered {results['answer_over_fetch_multipart']:.2f}, "
          f"ok {results['ok_over_fetch_multipart']:.2f}; over tus: answered {results['answer_over_tus']:.2f}, "
          f"ok {results['ok_over_tus']:.2f} (target within 1.1); not ok: {len(not_ok)}")
    return results
