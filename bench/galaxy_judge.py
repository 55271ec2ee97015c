"""Galaxy's own ``/api/tools`` as the judge of the preflight (``world_toolboxes.py --judge``).

A refusal is false when Galaxy, sent the same request the way BioBlend and its tool-test runner send it
(``POST /api/tools``, the legacy path: flat ``cond|param`` names as they are, the nested form with
``input_format: "21.01"``), creates a job. An acceptance mutates silently when the job Galaxy made records a
value other than the one ``check_tool_inputs`` said it would run (``resolved_inputs``). The jobs made here are
cancelled at once: only their recorded parameters matter.

Galaxy lets any value of a select through while one of the request's datasets is not yet ``ok`` (its check
waits for the data, ``is_runtime_context``), so a request is judged only once its datasets are ready, and the
judge's jobs go to a history of their own (their outputs never count as the inputs' history's pending items).
"""

import json
import time
import urllib.error
from typing import Any

from galaxy_mcp_analysis.testing import rest


def post_tool(galaxy, key: str, history_id: str, tool_id: str, version: str, request: dict, form: str) -> dict:
    """Galaxy's answer to the request: ``{"created": bool, "jobs": [...], "message": ...}``."""
    payload: dict[str, Any] = {"tool_id": tool_id, "tool_version": version, "history_id": history_id,
                               "inputs": request}
    if form == "nested":
        payload["input_format"] = "21.01"
    try:
        answer = rest(galaxy.galaxy_url, "/api/tools", key, payload, method="POST", timeout=300)
    except urllib.error.HTTPError as error:
        body = error.read().decode(errors="replace")
        try:
            message = json.loads(body).get("err_msg") or body
        except ValueError:
            message = body
        return {"created": False, "jobs": [], "message": f"{error.code}: {message}"[:400]}
    except OSError as error:  # a timeout on the loaded machine: no verdict
        return {"created": None, "jobs": [], "message": f"no answer: {error}"[:200]}
    jobs = [job["id"] for job in answer.get("jobs", [])]
    return {"created": bool(jobs), "jobs": jobs, "message": None if jobs else json.dumps(answer)[:300]}


READY = {"ok", "error", "failed_metadata", "discarded", "deferred"}


def referenced(request: Any) -> tuple[set[str], set[str]]:
    """The dataset and collection ids a request names (nested or flat)."""
    datasets, collections = set(), set()
    stack = [request]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            if value.get("src") == "hda" and "id" in value:
                datasets.add(value["id"])
            elif value.get("src") == "hdca" and "id" in value:
                collections.add(value["id"])
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return datasets, collections


def inputs_ready(galaxy, key: str, history_id: str, request: dict, timeout: float = 600) -> bool:
    """Waits until the request's datasets (and the inputs' history, for collections' elements) are settled;
    whether every one is ``ok``."""
    datasets, collections = referenced(request)
    deadline = time.monotonic() + timeout
    while True:
        states = [rest(galaxy.galaxy_url, f"/api/datasets/{d}?keys=state", key)["state"] for d in datasets]
        history = rest(galaxy.galaxy_url, f"/api/histories/{history_id}?keys=state", key)["state"] \
            if collections else "ok"
        if all(state in READY for state in states) and history in READY:
            return all(state == "ok" for state in states) and history == "ok"
        if time.monotonic() > deadline:
            return False
        time.sleep(2)


def cancel(galaxy, key: str, jobs: list[str]) -> None:
    for job in jobs:
        try:
            rest(galaxy.galaxy_url, f"/api/jobs/{job}", key, method="DELETE")
        except (urllib.error.HTTPError, OSError):
            pass  # it finished (failed, most: the tools' programs are not installed here) before the cancel


def job_parameters(galaxy, key: str, job: str) -> dict:
    """The tool state a job recorded (``/api/jobs/{id}`` view ``element``: one JSON text per top-level input)."""
    params = rest(galaxy.galaxy_url, f"/api/jobs/{job}?full=true", key)["params"]
    decoded = {}
    for name, text in params.items():
        try:
            decoded[name] = json.loads(text) if isinstance(text, str) else text
        except ValueError:
            decoded[name] = text
    return decoded


def _is_data(value: Any) -> bool:
    if isinstance(value, dict):
        return "src" in value or "values" in value or value.get("batch") is True
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) and "src" in v for v in value)


def _scalar(value: Any) -> Any:
    """One spelling per value: Galaxy records most values as text (``"3"``, ``"true"``), the preflight typed."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        if value.lower() in ("true", "false"):
            return value.lower()
        try:
            return float(value)
        except ValueError:
            return value
    if isinstance(value, list):
        return tuple(sorted(str(_scalar(v)) for v in value))
    return value


def differences(resolved: Any, recorded: Any, path: str = "inputs", compared: list | None = None) -> list[dict]:
    """Every value of ``resolved`` (check_tool_inputs) the job recorded otherwise; datasets are not compared
    (the job records database ids), values the job lacks are named. ``compared`` collects the paths compared."""
    compared = [] if compared is None else compared
    found: list[dict] = []
    if isinstance(resolved, dict) and not _is_data(resolved):
        if not isinstance(recorded, dict):
            return [{"path": path, "ours": resolved, "galaxy": recorded}]
        for name, value in resolved.items():
            if name not in recorded:
                if not _is_data(value):
                    found.append({"path": f"{path}.{name}", "ours": value, "galaxy": "(not recorded)"})
                continue
            found += differences(value, recorded[name], f"{path}.{name}", compared)
        return found
    if isinstance(resolved, list) and resolved and all(isinstance(v, dict) and not _is_data(v) for v in resolved):
        if not isinstance(recorded, list) or len(recorded) != len(resolved):
            return [{"path": path, "ours": f"{len(resolved)} blocks", "galaxy": recorded}]
        for index, (ours, theirs) in enumerate(zip(resolved, recorded)):
            found += differences(ours, theirs, f"{path}[{index}]", compared)
        return found
    if _is_data(resolved):
        return []
    compared.append(path)
    ours, theirs = _scalar(resolved), _scalar(recorded)
    if isinstance(ours, tuple) and isinstance(theirs, str):
        theirs = tuple(sorted(str(_scalar(v)) for v in theirs.split(",")))
    if ours != theirs and not ({ours, theirs} <= {None, ""}):
        found.append({"path": path, "ours": resolved, "galaxy": recorded})
    return found


def judge(galaxy, key, histories, tool_id, version, request, form, result, resolved=None, compare=True) -> dict:
    """Galaxy's verdict on one request the preflight judged (``result``), added to it. ``histories``: the
    inputs' history and the one the judge's jobs go to."""
    inputs_history, jobs_history = histories
    if not inputs_ready(galaxy, key, inputs_history, request):
        return {**result, "galaxy": {"created": None, "jobs": 0, "message": "an input dataset is not ok"}}
    verdict = post_tool(galaxy, key, jobs_history, tool_id, version, request, form)
    if verdict["created"] and compare and resolved is not None:
        try:
            compared: list[str] = []
            verdict["differences"] = differences(resolved, job_parameters(galaxy, key, verdict["jobs"][0]),
                                                 compared=compared)
            verdict["compared"] = len(compared)
        except (urllib.error.HTTPError, OSError, KeyError) as error:
            verdict["differences_error"] = str(error)[:200]
    cancel(galaxy, key, verdict["jobs"])
    verdict["jobs"] = len(verdict["jobs"])
    return {**result, "galaxy": verdict}
