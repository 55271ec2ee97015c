"""Sign-in (OAuth 2.1, issue 40) on the production deployment: tokens across gunicorn workers and a restart.

test_production_deployment.py switches sign-in on for its one deployment, runs ``across_workers``
after the replay (while both first workers are up) and ``after_restart`` after its one ``galaxyctl
restart``; its tests judge what these record. Which worker answered is read by PID from gunicorn's
access lines (uvicorn's); the browser's part is testing.oauth's HTTP client (Galaxy's login, consent).
"""

import re
import time
from urllib.parse import urlsplit

import httpx

from galaxy_mcp_analysis.testing.oauth import signed_in_tokens

#: uvicorn's access line in gunicorn's log: the worker's PID, the path, the status.
ACCESS = re.compile(r"\[pN:[^,]*,p:(\d+),.*\] \S+ - \"\w+ ([^ ?\"]+)\S* HTTP/1\.1\" (\d+)")
METADATA, TOKEN, REVOKE = "/.well-known/oauth-authorization-server", "/mcp-oauth/token", "/mcp-oauth/revoke"
MCP_HEADERS = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18"}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}


class Pinned:
    """An HTTP client whose one keep-alive connection the gunicorn worker ``want_pid`` serves (None: any)."""

    def __init__(self, galaxy, want_pid=None, tries=40):
        self.galaxy = galaxy
        for _ in range(tries):
            self.http = httpx.Client(base_url=galaxy.galaxy_url, timeout=120)
            self.pid, _ = self.served(METADATA, lambda: self.http.get(METADATA))
            if want_pid in (None, self.pid):
                return
            self.http.close()
        raise AssertionError(f"no new connection reached worker {want_pid} in {tries} tries")

    def served(self, path: str, call) -> tuple[int, object]:
        """Run ``call``; the PID of the worker whose access line for ``path`` it made, and its result."""
        offset = len(self.galaxy.log_text("gunicorn"))
        result = call()
        deadline = time.monotonic() + 30
        while not (pids := [int(pid) for pid, at, _ in ACCESS.findall(self.galaxy.log_text("gunicorn")[offset:])
                            if at.rstrip("/") == path.rstrip("/")]):
            assert time.monotonic() < deadline, f"no access line for {path}"
            time.sleep(0.1)
        return pids[-1], result

    def mcp_status(self, access_token: str) -> tuple[int, int]:
        """(worker PID, HTTP status) of a tools/list with this bearer token, on this connection."""
        path = urlsplit(self.galaxy.mcp_url).path
        pid, response = self.served(path, lambda: self.http.post(
            path, json=TOOLS_LIST, headers={**MCP_HEADERS, "authorization": f"Bearer {access_token}"}))
        return pid, response.status_code

    def refresh(self, client_id: str, refresh_token: str) -> tuple[int, httpx.Response]:
        return self.served(TOKEN, lambda: self.http.post(TOKEN, data={
            "grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": client_id}))


def across_workers(galaxy, person) -> dict:
    """Issued on worker A, used on B; refreshed on B (rotated), used on A; revoked on A, refused on B at once."""
    seen: dict = {}
    first = Pinned(galaxy)
    other = next(pid for pid in galaxy.gunicorn_workers() if pid != first.pid)
    second = Pinned(galaxy, want_pid=other)
    try:
        seen["issued_on"], (client_id, tokens) = first.served(TOKEN, lambda: signed_in_tokens(galaxy, person,
                                                                                              http=first.http))
        seen["used_on"] = second.mcp_status(tokens["access_token"])
        seen["refreshed_on"], rotated = second.refresh(client_id, tokens["refresh_token"])
        seen["rotated"] = rotated.status_code, rotated.json()
        new = rotated.json()
        seen["rotated_used_on"] = first.mcp_status(new["access_token"])
        seen["rotation"] = tuple(new[kind] != tokens[kind] for kind in ("refresh_token", "access_token"))
        revoked_id, revoked = signed_in_tokens(galaxy, person)
        seen["before_revocation"] = second.mcp_status(revoked["access_token"])
        seen["revoked_on"], response = first.served(REVOKE, lambda: first.http.post(REVOKE, data={
            "token": revoked["refresh_token"], "token_type_hint": "refresh_token", "client_id": revoked_id}))
        seen["revocation_status"] = response.status_code
        seen["after_revocation"] = second.mcp_status(revoked["access_token"])
        seen["workers"] = (first.pid, second.pid)
        seen["kept"] = {"client_id": client_id, **new}
    finally:
        first.http.close()
        second.http.close()
    return seen


def after_restart(galaxy, kept: dict) -> dict:
    """The access and refresh token issued before ``galaxyctl restart``, on the new workers."""
    pinned = Pinned(galaxy)
    try:
        seen = {"access": pinned.mcp_status(kept["access_token"])}
        _, rotated = pinned.refresh(kept["client_id"], kept["refresh_token"])
        seen["refresh"] = rotated.status_code, rotated.json()
        if rotated.status_code == 200:
            seen["refreshed_access"] = pinned.mcp_status(rotated.json()["access_token"])
    finally:
        pinned.http.close()
    seen["workers"] = galaxy.gunicorn_workers()
    return seen
