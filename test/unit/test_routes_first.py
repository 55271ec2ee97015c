"""Patch mcp-routes-first on the installed Galaxy's own include_mcp: 26.1.2 appends exact-path
routes to the MCP app, 26.1.0 and 26.1.1 mount it; either way the patch puts it first."""

from types import SimpleNamespace

from fastapi import FastAPI
from galaxy.webapps.galaxy import fast_app
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from galaxy_mcp_analysis.activation.patches import (
    apply_mcp_routes_first,
    check_mcp_routes_first,
)
from galaxy_mcp_analysis.core.settings import Settings


def test_the_mcp_app_is_matched_first_and_still_answers(monkeypatch):
    assert check_mcp_routes_first() is None
    app = FastAPI()
    app.state.route_name_index = {}
    app.get("/api/version")(lambda: {"version": "x"})
    mcp_app = Starlette(routes=[Route("/api/mcp", lambda request: PlainTextResponse("mcp"), methods=["POST"]),
                                Route("/", lambda request: PlainTextResponse("mcp"), methods=["POST"])])
    gx_app = SimpleNamespace(config=SimpleNamespace(mcp_server_path="/api/mcp"))
    monkeypatch.setattr(fast_app, "include_mcp", fast_app.include_mcp)  # restored after the test
    apply_mcp_routes_first(Settings())
    fast_app.include_mcp(app, gx_app, mcp_app)
    first, *rest = app.router.routes
    assert mcp_app in (getattr(first, "endpoint", None), getattr(first, "app", None)), first
    assert "/api/version" in {getattr(route, "path", None) for route in rest}
    with TestClient(app) as client:
        assert client.get("/api/version").json() == {"version": "x"}
        assert "mcp" in {client.post(path).text for path in ("/api/mcp", "/api/mcp/")}
