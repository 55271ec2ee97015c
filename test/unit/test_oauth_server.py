"""The authorization server's endpoints (the MCP SDK's handlers on oauth.provider and oauth.storage),
on a real SQLAlchemy database (sqlite file) and Starlette's test client; no Galaxy: the consent step's
Allow is ``provider.issue_code`` on the signed request /authorize produced."""

from types import SimpleNamespace
from urllib.parse import (
    parse_qs,
    urlsplit,
)

import pytest
from sqlalchemy import create_engine
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.testclient import TestClient

from galaxy_mcp_analysis.core import oauth as rules
from galaxy_mcp_analysis.oauth.routes import (
    signing_key,
    SignIn,
)

BASE = "http://127.0.0.1:8080"
REDIRECT = "http://127.0.0.1:9999/callback"
VERIFIER = "a" * 50


def make_server(tmp_path, settings=None, prefix=""):
    """The sign-in's routes on a sqlite file; under ``prefix``, mounted there as Galaxy mounts its app
    under ``galaxy_url_prefix`` (fast_app.initialize_fast_app), its public URL ``BASE + prefix``."""
    engine = create_engine(f"sqlite:///{tmp_path / 'oauth.sqlite'}")
    sign_in = SignIn(SimpleNamespace(config=SimpleNamespace(id_secret="s" * 16)), engine, BASE + prefix, "/api/mcp",
                     settings)
    sign_in.store.create_tables()
    app = Starlette(routes=sign_in.routes())
    client = TestClient(Starlette(routes=[Mount(prefix, app=app)]) if prefix else app, base_url=BASE)
    client.sign_in = sign_in
    return client


@pytest.fixture
def server(tmp_path):
    return make_server(tmp_path)


def register(server, **fields):
    body = {"redirect_uris": [REDIRECT], "client_name": "Test client", "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"], **fields}
    response = server.post("/mcp-oauth/register", json=body)
    assert response.status_code == 201, response.text
    return response.json()["client_id"]


def authorize(server, client_id, **params):
    query = {"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT, "state": "st",
             "code_challenge": rules.s256(VERIFIER), "code_challenge_method": "S256",
             "resource": f"{BASE}/api/mcp", **params}
    return server.get("/mcp-oauth/authorize", params={k: v for k, v in query.items() if v is not None},
                      follow_redirects=False)


def allowed_code(server, client_id, **params):
    response = authorize(server, client_id, **params)
    assert response.status_code == 302, response.text
    pending = rules.unsign(parse_qs(urlsplit(response.headers["location"]).query)["request"][0],
                           signing_key("s" * 16))
    return server.sign_in.provider.issue_code(pending, user_id=7)


def token(server, client_id, **form):
    return server.post("/mcp-oauth/token", data={"client_id": client_id, **form})


def exchange(server, client_id, code, verifier=VERIFIER):
    return token(server, client_id, grant_type="authorization_code", code=code, code_verifier=verifier,
                 redirect_uri=REDIRECT)


def tables(server) -> dict:
    store = server.sign_in.store
    with store.engine.connect() as connection:
        from sqlalchemy import (
            func,
            select,
        )

        from galaxy_mcp_analysis.oauth import storage

        return {table.name: connection.execute(select(func.count()).select_from(table)).scalar()
                for table in (storage.CLIENTS, storage.GRANTS, storage.CODES, storage.TOKENS)}


def test_metadata_names_the_issuer_and_only_s256_and_public_clients(server):
    metadata = server.get("/.well-known/oauth-authorization-server").json()
    assert metadata["issuer"].rstrip("/") == BASE
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    assert metadata["token_endpoint"] == f"{BASE}/mcp-oauth/token"
    assert metadata["token_endpoint_auth_methods_supported"] == ["none"]
    resource = server.get("/.well-known/oauth-protected-resource/api/mcp").json()
    assert resource["resource"] == f"{BASE}/api/mcp" and resource["scopes_supported"] == list(rules.SCOPES)


def test_the_whole_exchange_refresh_rotation_and_revocation(server):
    client_id = register(server)
    issued = exchange(server, client_id, allowed_code(server, client_id)).json()
    assert issued["access_token"].startswith(rules.ACCESS_PREFIX) and issued["expires_in"] == 3600
    provider = server.sign_in.provider
    assert provider.access_token(issued["access_token"]).user_id == 7
    stored = str(tables(server)) + repr(server.sign_in.store.grants())
    assert issued["access_token"] not in stored
    refreshed = token(server, client_id, grant_type="refresh_token", refresh_token=issued["refresh_token"]).json()
    assert refreshed["refresh_token"] != issued["refresh_token"]
    assert provider.access_token(refreshed["access_token"]) is not None
    revoked = server.post("/mcp-oauth/revoke", data={"client_id": client_id, "token": refreshed["access_token"]})
    assert revoked.status_code == 200
    assert provider.access_token(refreshed["access_token"]) is None
    again = token(server, client_id, grant_type="refresh_token", refresh_token=refreshed["refresh_token"])
    assert again.json()["error"] == "invalid_grant"


def test_a_reused_refresh_token_revokes_the_whole_grant(server):
    client_id = register(server)
    issued = exchange(server, client_id, allowed_code(server, client_id)).json()
    rotated = token(server, client_id, grant_type="refresh_token", refresh_token=issued["refresh_token"]).json()
    reuse = token(server, client_id, grant_type="refresh_token", refresh_token=issued["refresh_token"])
    assert reuse.status_code == 400 and reuse.json()["error"] == "invalid_grant"
    assert server.sign_in.provider.access_token(rotated["access_token"]) is None
    after = token(server, client_id, grant_type="refresh_token", refresh_token=rotated["refresh_token"])
    assert after.json()["error"] == "invalid_grant"


def test_a_code_used_twice_issues_nothing_the_second_time_and_revokes_the_first(server):
    client_id = register(server)
    code = allowed_code(server, client_id)
    first = exchange(server, client_id, code).json()
    second = exchange(server, client_id, code)
    assert second.status_code == 400 and second.json()["error"] == "invalid_grant"
    assert "access_token" not in second.json()
    assert server.sign_in.provider.access_token(first["access_token"]) is None


def test_another_clients_code_and_a_wrong_verifier_get_invalid_grant(server):
    owner, thief = register(server), register(server)
    code = allowed_code(server, owner)
    assert exchange(server, thief, code).json()["error"] == "invalid_grant"
    assert exchange(server, owner, code, verifier="b" * 50).json()["error"] == "invalid_grant"
    assert tables(server)["mcp_oauth_token"] == 0


@pytest.mark.parametrize(("params", "error"), [
    ({"code_challenge_method": None}, "invalid_request"),
    ({"code_challenge_method": "plain"}, "invalid_request"),
    ({"code_challenge": None}, "invalid_request"),
    ({"resource": "https://elsewhere.example/mcp"}, "invalid_target"),
    ({"scope": "galaxy:admin"}, "invalid_scope"),
])
def test_bad_authorization_requests_get_their_error_and_create_nothing(server, params, error):
    client_id = register(server)
    response = authorize(server, client_id, **params)
    if response.status_code == 302:  # the SDK answers at the (registered) redirect URI
        location = response.headers["location"]
        assert location.startswith(REDIRECT) and parse_qs(urlsplit(location).query)["error"] == [error]
        assert "/mcp-oauth/consent" not in location
    else:
        assert response.status_code == 400 and response.json()["error"] == error
    assert tables(server)["mcp_oauth_grant"] == 0


def test_an_unregistered_redirect_is_never_followed(server):
    client_id = register(server)
    response = authorize(server, client_id, redirect_uri="https://evil.example/cb")
    assert response.status_code == 400 and response.json()["error"] == "invalid_request"
    assert "location" not in response.headers


def test_registration_refusals_register_nothing(server):
    for body in ({"redirect_uris": ["http://evil.example/cb"]}, {"redirect_uris": [REDIRECT], "client_name": "x" * 300},
                 {"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "client_secret_post"}):
        response = server.post("/mcp-oauth/register", json=body)
        assert response.status_code == 400 and response.json()["error"] in ("invalid_redirect_uri", "invalid_client_metadata")
    assert server.post("/mcp-oauth/register", content=b"not json").json()["error"] == "invalid_client_metadata"
    assert tables(server)["mcp_oauth_client"] == 0
