"""The middleware on Galaxy's MCP server is the one declared list (mcp.stack.MIDDLEWARE_STACK), in its order,
whatever order the patches that add it run in: the real patches' server customizers, run on a FastMCP server
built the way Galaxy builds its own."""

import types

import pytest
from fastmcp import FastMCP
from sqlalchemy import create_engine

from galaxy_mcp_analysis.activation import built_server
from galaxy_mcp_analysis.activation.patches import PATCHES
from galaxy_mcp_analysis.core.settings import Settings
from galaxy_mcp_analysis.mcp.stack import (
    declared_order,
    GALAXYS_OWN,
    MIDDLEWARE_STACK,
    place,
)


@pytest.fixture
def customizers(monkeypatch, tmp_path):
    """The server customizers of every patch that adds middleware, the audit trail and a policy file switched on."""
    monkeypatch.setattr(built_server, "_SERVER_CUSTOMIZERS", [])
    monkeypatch.setattr(built_server, "_customize_built_mcp_app", lambda: None)  # Galaxy's app factory untouched
    settings = Settings(audit_log=str(tmp_path / "audit.jsonl"), policy_file=str(tmp_path / "policy.yml"))
    for patch in PATCHES:
        if patch.id in ("mcp-tools", "mcp-request-session", "mcp-coded-errors", "mcp-header-auth", "mcp-policy",
                        "mcp-audit", "mcp-tasks"):
            patch.apply(settings)
    return list(built_server._SERVER_CUSTOMIZERS)


def built(customizers, tmp_path):
    model = types.SimpleNamespace(engine=create_engine(f"sqlite:///{tmp_path / 'tasks.sqlite'}"))  # the tasks' table
    gx_app = types.SimpleNamespace(config=types.SimpleNamespace(config_dict={}, data_dir=str(tmp_path)), model=model)
    server = FastMCP("Galaxy")  # as Galaxy's get_mcp_app makes it: FastMCP's own middleware already in place
    for customize in customizers:
        customize(server, gx_app)
    return server


def test_the_patches_build_the_declared_stack_in_patch_order_and_in_reverse(customizers, tmp_path):
    from galaxy_mcp_analysis.oauth.scopes import TokenScopes

    without_oauth = [entry for entry in MIDDLEWARE_STACK if entry is not TokenScopes]  # placed by the sign-in, below
    assert len(customizers) == 7
    in_order, reversed_ = built(customizers, tmp_path), built(customizers[::-1], tmp_path)
    assert declared_order(in_order) == without_oauth
    assert [type(m) for m in reversed_.middleware] == [type(m) for m in in_order.middleware]


def test_the_oauth_scopes_go_innermost_after_the_server_is_built(customizers, tmp_path):
    from galaxy_mcp_analysis.oauth.scopes import TokenScopes

    server = built(customizers, tmp_path)
    place(server, TokenScopes({}))
    assert declared_order(server) == list(MIDDLEWARE_STACK)


def test_galaxys_own_middleware_stays_inside_the_audit_trail_and_outside_ours(customizers, tmp_path):
    server = built(customizers, tmp_path)
    own = [m for m in server.middleware if type(m) not in MIDDLEWARE_STACK]
    assert own, "FastMCP builds Galaxy's server with middleware of its own (schema dereferencing)"
    # Outside it only the tasks' answer (which sees the finished result) and the audit trail.
    assert server.middleware.index(own[0]) == 2
    assert MIDDLEWARE_STACK.index(GALAXYS_OWN) == 2


def test_a_middleware_without_a_declared_place_is_refused():
    class Undeclared:
        pass

    with pytest.raises(ValueError, match="Undeclared has no place"):
        place(FastMCP("x"), Undeclared())
