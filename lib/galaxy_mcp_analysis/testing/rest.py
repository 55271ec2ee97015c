"""Galaxy's REST API, for test set-up and for comparing MCP against REST."""

import json
import urllib.request
from typing import Any


def rest(
    galaxy_url: str, path: str, api_key: str, payload: Any = None, method: str | None = None, timeout: float = 60
) -> Any:
    """A Galaxy REST call, for test set-up and for comparing MCP against REST (benchmarks raise ``timeout``)."""
    data = json.dumps(payload).encode() if payload is not None else None
    request = urllib.request.Request(
        f"{galaxy_url}{path}",
        data=data,
        method=method,
        headers={"x-api-key": api_key, "content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        body = response.read()
    return json.loads(body) if body else None


def create_user(galaxy_url: str, admin_api_key: str, username: str) -> str:
    """Create a regular user through Galaxy's REST API; returns its API key."""
    user = rest(
        galaxy_url,
        "/api/users",
        admin_api_key,
        {"username": username, "email": f"{username}@example.org", "password": "password-" + username},
    )
    return rest(galaxy_url, f"/api/users/{user['id']}/api_key", admin_api_key, {})
