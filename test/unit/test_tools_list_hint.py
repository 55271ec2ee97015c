"""tools/list's caching hint (tools/orientation.py) leaves every older revision's answer byte for byte as it was:
a FastMCP server with two tools, stateless JSON as Galaxy serves it, with and without the hint (Starlette's test
client; no Galaxy). The 2026-07-28 side, the hint present: test_protocol_versions.py on a live Galaxy."""

import pytest
from fastmcp import FastMCP
from starlette.testclient import TestClient

from galaxy_mcp_analysis.tools.orientation import hint_tools_list_caching


def tools_list_bytes(hinted: bool, version: str) -> bytes:
    mcp = FastMCP("hint-check")

    @mcp.tool
    def second(x: int) -> int:
        return x

    @mcp.tool
    def first(y: str) -> str:
        return y

    if hinted:
        hint_tools_list_caching(mcp)
    app = mcp.http_app(path="/mcp", stateless_http=True, json_response=True)
    with TestClient(app) as client:
        response = client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers={
            "accept": "application/json, text/event-stream", "mcp-protocol-version": version})
    assert response.status_code == 200, response.text
    return response.content


@pytest.mark.parametrize("version", ["2025-03-26", "2025-06-18", "2025-11-25"])
def test_an_older_revisions_tools_list_is_the_same_bytes_with_the_hint(version):
    plain = tools_list_bytes(False, version)
    assert tools_list_bytes(True, version) == plain
    assert b"ttlMs" not in plain and b"cacheScope" not in plain
    assert plain.index(b'"second"') < plain.index(b'"first"')  # registration order, not sorted


def test_the_hint_is_private_for_five_minutes_and_kept_once():
    mcp = FastMCP("hint-check")
    hint_tools_list_caching(mcp)
    hint_tools_list_caching(mcp)
    hint = mcp._mcp_server.cache_hints["tools/list"]
    assert (hint.ttl_ms, hint.scope) == (300_000, "private")
