"""Patch mcp-request-state-key: two Galaxy servers built with one id_secret (two gunicorn workers) seal
``requestState`` under one key, so an answer to an input_required result may reach either; another
id_secret (another Galaxy) cannot open it."""

import types

import pytest
from fastmcp import FastMCP
from mcp.server.request_state import (
    InvalidRequestState,
    RequestStateBoundary,
)

from galaxy_mcp_analysis.activation import built_server
from galaxy_mcp_analysis.activation.transport import apply_request_state_key
from galaxy_mcp_analysis.core.settings import Settings


def boundary_of(id_secret: str, customize) -> RequestStateBoundary:
    server = FastMCP("Galaxy")
    customize(server, types.SimpleNamespace(config=types.SimpleNamespace(id_secret=id_secret)))
    [boundary] = [m for m in server._mcp_server.middleware if isinstance(m, RequestStateBoundary)]
    return boundary


def test_workers_of_one_galaxy_share_the_key_and_another_galaxy_does_not(monkeypatch):
    monkeypatch.setattr(built_server, "_SERVER_CUSTOMIZERS", [])
    monkeypatch.setattr(built_server, "_customize_built_mcp_app", lambda: None)
    apply_request_state_key(Settings())
    [customize] = built_server._SERVER_CUSTOMIZERS
    one, two = boundary_of("a" * 32, customize), boundary_of("a" * 32, customize)
    token = one._security.codec.seal(b"consent:delete_history_items:")
    assert two._security.codec.unseal(token) == b"consent:delete_history_items:"
    with pytest.raises(InvalidRequestState):
        boundary_of("b" * 32, customize)._security.codec.unseal(token)
    unpatched = [m for m in FastMCP("Galaxy")._mcp_server.middleware if isinstance(m, RequestStateBoundary)][0]
    with pytest.raises(InvalidRequestState):  # FastMCP's own: a key of this process's server alone
        unpatched._security.codec.unseal(token)
