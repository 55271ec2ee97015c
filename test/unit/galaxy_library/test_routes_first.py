"""Patch mcp-routes-first on the installed Galaxy's own include_mcp and its real API route table:
26.1.2 appends exact-path routes to the MCP app, 26.1.0 and 26.1.1 mount it at /api/mcp/; either
way the patch puts it before Galaxy's catch-alls (``/api/{rest_of_path:path}``, the WSGI mount)."""

import inspect
from types import SimpleNamespace

from galaxy.version import VERSION
from galaxy.webapps.galaxy import fast_app
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route
from starlette.testclient import TestClient

from galaxy_mcp_analysis.activation.transport import (
    apply_mcp_routes_first,
    check_mcp_routes_first,
)
from galaxy_mcp_analysis.core.settings import Settings

#: The path the MCP app answers on in each release's shape (exact routes, or the mount's slash form).
MCP_PATH = "/api/mcp" if VERSION == "26.1.2" else "/api/mcp/"


def galaxy_app_with_mcp(monkeypatch):
    """Galaxy's API route table as initialize_fast_app builds it, the MCP app, then the WSGI catch-all."""
    app = fast_app.get_fastapi_instance()
    fast_app.include_all_package_routers(app, "galaxy.webapps.galaxy.api")
    app.state.route_name_index = fast_app.build_route_name_index(app)
    galaxy_routes = list(app.router.routes)
    mcp_app = Starlette(routes=[Route("/api/mcp", lambda request: PlainTextResponse("mcp"), methods=["POST"]),
                                Route("/", lambda request: PlainTextResponse("mcp"), methods=["POST"])])
    # Galaxy's own include_mcp under every wrapper an earlier test of this process applied (the
    # upload route's needs a real gx_app.model): this test wraps it with routes-first alone, and
    # monkeypatch restores the process's wrapped one afterwards.
    monkeypatch.setattr(fast_app, "include_mcp", inspect.unwrap(fast_app.include_mcp))
    apply_mcp_routes_first(Settings())
    fast_app.include_mcp(app, SimpleNamespace(config=SimpleNamespace(mcp_server_path="/api/mcp")), mcp_app)
    app.mount("/", lambda scope, receive, send: PlainTextResponse("wsgi")(scope, receive, send))
    return app, mcp_app, galaxy_routes


def test_the_mcp_app_is_matched_before_galaxys_catch_alls(monkeypatch):
    assert check_mcp_routes_first() is None
    app, mcp_app, galaxy_routes = galaxy_app_with_mcp(monkeypatch)
    routes = app.router.routes
    is_mcp = [mcp_app in (getattr(route, "endpoint", None), getattr(route, "app", None)) for route in routes]
    first_other = is_mcp.index(False)
    assert first_other >= 1 and not any(is_mcp[first_other:]), is_mcp
    # Galaxy's own routes follow in their own order, the catch-alls after the MCP app.
    assert routes[first_other:-1] == galaxy_routes
    assert "/api/{rest_of_path:path}" in [getattr(route, "path", None) for route in galaxy_routes]
    assert isinstance(routes[-1], Mount) and routes[-1].path == ""
    with TestClient(app) as client:
        answer = client.post(MCP_PATH, follow_redirects=False)
        assert (answer.status_code, answer.text) == (200, "mcp")
        assert client.get("/some/page").text == "wsgi"


def test_without_the_patch_galaxys_routes_come_first(monkeypatch):
    """The contrast: Galaxy's include_mcp alone adds the MCP app after its API routes."""
    app = fast_app.get_fastapi_instance()
    fast_app.include_all_package_routers(app, "galaxy.webapps.galaxy.api")
    app.state.route_name_index = fast_app.build_route_name_index(app)
    mcp_app = Starlette(routes=[Route("/api/mcp", lambda request: PlainTextResponse("mcp"), methods=["POST"])])
    include = inspect.unwrap(fast_app.include_mcp)  # Galaxy's own, under every wrapper (routes first, sign-in)
    include(app, SimpleNamespace(config=SimpleNamespace(mcp_server_path="/api/mcp")), mcp_app)
    first = app.router.routes[0]
    assert mcp_app not in (getattr(first, "endpoint", None), getattr(first, "app", None))
