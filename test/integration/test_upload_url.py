"""Issue 51, item 2: create_upload_url on the session's Galaxy. A local binary goes in with the exact curl line
the tool gave and comes back byte for byte; every refusal (expired, reused, oversized before and mid-stream,
tampered, another user's, deleted history, deleted account) answers 4xx and creates nothing: the history's
contents and jobs, and Galaxy's upload store, are compared before and after."""

import dataclasses
import hashlib
import json
import os
import shlex
import subprocess
import time
import urllib.request
from pathlib import Path

import httpx
import pytest

from conftest import wait_for_dataset
from galaxy_mcp_analysis.core.upload_urls import (
    make_token,
    read_token,
    signing_key,
)
from galaxy_mcp_analysis.testing import (
    create_user,
    rest,
)
from galaxy_mcp_analysis.testing.audit import last_audit_line
from galaxy_mcp_analysis.testing.memory import PeakRss

MIB = 1 << 20
#: The server's peak memory growth while a 50 MiB body streams in: its 1 MiB writes and the fetch, far below
#: the body's size (held in memory, it would be at least 50 MiB).
UPLOAD_MEMORY_BUDGET = 20 * MIB


def key_of(galaxy) -> bytes:
    return signing_key(json.loads((Path(galaxy.data_dir) / "secrets.json").read_text())["id_secret"])


def run_curl(answer: dict, path: Path) -> dict:
    """The tool's own curl line with <file> replaced, as an agent would run it; its JSON answer."""
    command = answer["curl"].replace("<file>", shlex.quote(str(path)))
    done = subprocess.run(command, shell=True, capture_output=True, timeout=300)
    return {"exit": done.returncode, **json.loads(done.stdout or b"{}")}


def put(url: str, body, headers=None) -> httpx.Response:
    return httpx.put(url, content=body, headers=headers or {}, timeout=120)


def staged_files(galaxy) -> list[str]:
    return sorted(name for name in os.listdir(Path(galaxy.data_dir) / "tmp") if name.startswith("mcp_upload_"))


class State:
    """What a refused upload must leave as it was: every item of the history (hidden and deleted too), its
    jobs; and no new staged file in Galaxy's upload store (another test's upload job may still remove its own)."""

    def __init__(self, galaxy, api_key, history_id):
        gx = galaxy.galaxy_url
        self.galaxy = galaxy
        self.items = sorted(item["id"] for item in rest(gx, f"/api/histories/{history_id}/contents", api_key))
        self.jobs = sorted(job["id"] for job in rest(gx, f"/api/jobs?history_id={history_id}&limit=500", api_key))
        self.staged = set(staged_files(galaxy))

    def __eq__(self, before) -> bool:
        return (self.items, self.jobs) == (before.items, before.jobs) and not (self.staged - before.staged)

    def __repr__(self):
        return f"items {self.items}, jobs {self.jobs}, staged {sorted(self.staged)}"


state = State


def display(galaxy, api_key, dataset_id) -> str:
    """SHA-256 of the dataset's bytes as Galaxy's REST API serves them."""
    request = urllib.request.Request(f"{galaxy.galaxy_url}/api/datasets/{dataset_id}/display?to_ext=data",
                                     headers={"x-api-key": api_key})
    digest = hashlib.sha256()
    with urllib.request.urlopen(request, timeout=120) as response:
        while chunk := response.read(MIB):
            digest.update(chunk)
    return digest.hexdigest()


def upload_url(mcp, api_key, history_id, **arguments) -> dict:
    return mcp.call_ok("create_upload_url", history_id=history_id, api_key=api_key,
                       **{"name": "file.bin", **arguments})


def test_a_50_mb_binary_arrives_byte_for_byte_with_the_curl_line(galaxy, mcp, api_key, history_id, tmp_path):
    path = tmp_path / "blob.bin"
    with open(path, "wb") as handle:
        for _ in range(50):
            handle.write(os.urandom(MIB))
    answer = upload_url(mcp, api_key, history_id, name="blob.bin", file_type="data")
    assert answer["method"] == "PUT" and answer["max_bytes"] >= 50 * MIB and "<file>" in answer["curl"]
    assert api_key not in answer["upload_url"] and api_key not in answer["curl"]
    with PeakRss(galaxy.process.pid) as rss:  # the server process that receives the body
        result = run_curl(answer, path)
    assert result["exit"] == 0, result
    print(f"\nserver peak RSS growth while receiving 50 MiB: {rss.growth / MIB:.1f} MiB")
    assert rss.growth < UPLOAD_MEMORY_BUDGET, f"{rss.growth / MIB:.1f} MiB: the body was held in memory"
    assert result["bytes"] == 50 * MIB and result["history_id"] == history_id
    details = wait_for_dataset(galaxy, api_key, result["dataset_id"], timeout=900)
    assert details["state"] == "ok", details
    assert details["name"] == "blob.bin" and details["file_size"] == 50 * MIB
    job = rest(galaxy.galaxy_url, f"/api/jobs/{result['job_id']}", api_key)
    assert job["tool_id"] == "__DATA_FETCH__" and job["state"] == "ok"
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert display(galaxy, api_key, result["dataset_id"]) == digest
    assert staged_files(galaxy) == []  # the upload job removed Galaxy's staged copy
    line = last_audit_line(galaxy.audit_log)
    assert line["phase"] == "upload" and line["created"] == [result["dataset_id"]]
    assert line["jobs"] == [result["job_id"]]


def test_auto_detects_the_datatype_and_the_url_is_refused_the_second_time(galaxy, mcp, api_key, history_id):
    answer = upload_url(mcp, api_key, history_id, name="table.tsv")
    first = put(answer["upload_url"], b"gene\tcount\nmecA\t3\nblaZ\t17\n", answer["headers"])
    assert first.status_code == 201, first.text
    assert wait_for_dataset(galaxy, api_key, first.json()["dataset_id"], timeout=900)["extension"] == "tabular"
    before = state(galaxy, api_key, history_id)
    again = put(answer["upload_url"], b"more\n")
    assert again.status_code == 409 and "used already" in again.json()["error"]
    assert state(galaxy, api_key, history_id) == before


def test_over_the_cap_is_refused_before_and_while_streaming(galaxy, mcp, api_key, history_id):
    before = state(galaxy, api_key, history_id)
    declared = upload_url(mcp, api_key, history_id, max_bytes=1000)
    refused = put(declared["upload_url"], b"x" * 5000)  # Content-Length 5000: refused before any byte is read
    assert refused.status_code == 413 and "still unused" in refused.json()["error"]
    streamed = upload_url(mcp, api_key, history_id, max_bytes=1000)
    chunks = (b"y" * 400 for _ in range(10))  # chunked, no Content-Length: cut off past 1000 bytes
    cut = put(streamed["upload_url"], chunks)
    assert cut.status_code == 413 and "used up" in cut.json()["error"], cut.text
    assert state(galaxy, api_key, history_id) == before
    error = mcp.call_error("create_upload_url", history_id=history_id, name="x", max_bytes=10**15, api_key=api_key)
    assert error.startswith("[VALIDATION_ERROR] max_bytes=")


def test_expired_and_tampered_urls_are_refused(galaxy, mcp, api_key, history_id):
    before = state(galaxy, api_key, history_id)
    answer = upload_url(mcp, api_key, history_id)
    token = answer["upload_url"].rsplit("/", 1)[1]
    key = key_of(galaxy)
    claims = read_token(key, token, time.time())
    expired = make_token(key, dataclasses.replace(claims, expires_at=int(time.time()) - 5, nonce="e" * 32))
    base = answer["upload_url"].rsplit("/", 1)[0]
    response = put(f"{base}/{expired}", b"data\n")
    assert response.status_code == 410 and "expired" in response.json()["error"]
    body, _, signature = token.partition(".")
    bigger = make_token(key, dataclasses.replace(claims, max_bytes=10**12)).partition(".")[0]
    for forged in (f"{bigger}.{signature}", f"{body}.{signature[:-2]}", "nonsense"):
        response = put(f"{base}/{forged}", b"data\n")
        assert response.status_code == 403 and "not a valid upload URL" in response.json()["error"], forged
    assert state(galaxy, api_key, history_id) == before
    assert put(answer["upload_url"], b"still good\n").status_code == 201  # the refusals did not use it up


def test_another_users_history_is_refused_by_the_tool_and_by_the_route(galaxy, mcp, api_key, other_user_key,
                                                                        history_id):
    before = state(galaxy, api_key, history_id)
    error = mcp.call_error("create_upload_url", history_id=history_id, name="x", api_key=other_user_key)
    assert error.split("]")[0][1:] in ("NOT_FOUND", "AUTHORIZATION_ERROR"), error
    # A token for the owner's history naming the other user (as if made by that user): the route asks Galaxy.
    key = key_of(galaxy)
    own = mcp.call_ok("create_history", name="other's", api_key=other_user_key)["id"]
    theirs = read_token(key, upload_url(mcp, other_user_key, own)["upload_url"].rsplit("/", 1)[1], time.time())
    forged = make_token(key, dataclasses.replace(theirs, history_id=history_id))
    response = put(f"{galaxy.galaxy_url}/api/mcp-upload/{forged}", b"data\n")
    assert response.status_code in (403, 404) and "Nothing was created" in response.json()["error"], response.text
    assert state(galaxy, api_key, history_id) == before


def test_a_deleted_history_or_account_is_refused(galaxy, mcp, api_key, history_id):
    answer = upload_url(mcp, api_key, history_id)
    rest(galaxy.galaxy_url, f"/api/histories/{history_id}", api_key, method="DELETE")
    before = state(galaxy, api_key, history_id)
    response = put(answer["upload_url"], b"data\n")
    assert response.status_code == 409 and "is deleted" in response.json()["error"], response.text
    assert state(galaxy, api_key, history_id) == before
    # An account deleted after its URL was made.
    user_key = create_user(galaxy.galaxy_url, galaxy.admin_api_key, f"leaving{os.getpid()}{int(time.time())}")
    user_history = mcp.call_ok("create_history", name="leaving", api_key=user_key)["id"]
    leaving = upload_url(mcp, user_key, user_history)
    user_id = rest(galaxy.galaxy_url, "/api/users/current", user_key)["id"]
    before = state(galaxy, galaxy.admin_api_key, user_history)
    rest(galaxy.galaxy_url, f"/api/users/{user_id}", galaxy.admin_api_key, method="DELETE")
    response = put(leaving["upload_url"], b"data\n")
    assert response.status_code == 403 and "no longer exists or was deleted" in response.json()["error"]
    assert state(galaxy, galaxy.admin_api_key, user_history) == before


@pytest.mark.parametrize("file_type", ["no_such_type"])
def test_an_unknown_file_type_is_refused_by_the_tool(mcp, api_key, history_id, file_type):
    error = mcp.call_error("create_upload_url", history_id=history_id, name="x", file_type=file_type, api_key=api_key)
    assert error.startswith("[VALIDATION_ERROR] file_type"), error
