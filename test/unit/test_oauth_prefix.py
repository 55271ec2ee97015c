"""Galaxy under a path prefix (``galaxy_url_prefix: /galaxy``, ``galaxy_infrastructure_url:
https://host/galaxy``): the sign-in's routes mounted under the prefix as Galaxy mounts its app
(fast_app.initialize_fast_app), every URL it publishes carrying the prefix, the metadata at the
paths RFC 8414 §3 and RFC 9728 §3.1 give, as the proxy rule of doc/admin-guide.md forwards them.
No Galaxy: the launcher starts Galaxy without a prefix (doc/admin-guide.md has the manual check)."""

from urllib.parse import (
    parse_qs,
    urlsplit,
)

from starlette.requests import Request

from galaxy_mcp_analysis.core import oauth as rules
from test_oauth_server import (
    BASE,
    make_server,
    REDIRECT,
    VERIFIER,
)

PREFIX = "/galaxy"
PUBLIC = BASE + PREFIX


def test_every_published_url_carries_the_prefix(tmp_path):
    server = make_server(tmp_path, prefix=PREFIX)
    # the host-root URL a client derives (RFC 8414 §3), which the proxy forwards to Galaxy's prefix
    host_root = rules.well_known_url(PUBLIC, "oauth-authorization-server")
    assert host_root == f"{BASE}/.well-known/oauth-authorization-server/galaxy"
    metadata = server.get(f"{PREFIX}/.well-known/oauth-authorization-server/galaxy").json()
    assert metadata["issuer"].rstrip("/") == PUBLIC
    for endpoint in ("authorization", "token", "registration", "revocation"):
        assert metadata[f"{endpoint}_endpoint"].startswith(f"{PUBLIC}/mcp-oauth/"), metadata
    # the issuer-relative form some clients try answers too
    assert server.get(f"{PREFIX}/.well-known/oauth-authorization-server").json() == metadata
    assert server.sign_in.resource_metadata_url == f"{BASE}/.well-known/oauth-protected-resource/galaxy/api/mcp"
    resource = server.get(f"{PREFIX}/.well-known/oauth-protected-resource/galaxy/api/mcp").json()
    assert resource["resource"] == f"{PUBLIC}/api/mcp"
    assert [url.rstrip("/") for url in resource["authorization_servers"]] == [PUBLIC]


def test_a_sign_in_runs_through_the_prefixed_endpoints(tmp_path):
    server = make_server(tmp_path, prefix=PREFIX)
    registered = server.post(f"{PREFIX}/mcp-oauth/register", json={
        "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"]})
    client_id = registered.json()["client_id"]
    authorize = server.get(f"{PREFIX}/mcp-oauth/authorize", follow_redirects=False, params={
        "response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT, "state": "st",
        "code_challenge": rules.s256(VERIFIER), "code_challenge_method": "S256", "resource": f"{PUBLIC}/api/mcp"})
    consent = authorize.headers["location"]
    assert consent.startswith(f"{PUBLIC}/mcp-oauth/consent?request=")
    wrong_resource = server.get(f"{PREFIX}/mcp-oauth/authorize", follow_redirects=False, params={
        "response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT, "state": "st",
        "code_challenge": rules.s256(VERIFIER), "code_challenge_method": "S256", "resource": f"{BASE}/api/mcp"})
    assert "error=invalid_target" in wrong_resource.headers["location"]  # the unprefixed URL is not this resource
    pending = rules.unsign(parse_qs(urlsplit(consent).query)["request"][0], server.sign_in.pages.key)
    code = server.sign_in.provider.issue_code(pending, user_id=7)
    issued = server.post(f"{PREFIX}/mcp-oauth/token", data={
        "client_id": client_id, "grant_type": "authorization_code", "code": code, "code_verifier": VERIFIER,
        "redirect_uri": REDIRECT})
    assert issued.status_code == 200, issued.text
    assert server.sign_in.provider.access_token(issued.json()["access_token"]).resource == f"{PUBLIC}/api/mcp"


def test_a_signed_out_person_goes_to_the_prefixed_login_and_back_inside_the_prefix(tmp_path):
    pages = make_server(tmp_path, prefix=PREFIX).sign_in.pages
    request = Request({"type": "http", "method": "GET", "path": f"{PREFIX}/mcp-oauth/consent", "root_path": PREFIX,
                       "query_string": b"request=abc", "headers": [(b"host", b"127.0.0.1:8080")]})
    location = pages._login_redirect(request).headers["location"]
    # Galaxy's login page adds its prefix to a same-site path (controllers/user.py __get_redirect_url)
    assert location == f"{PUBLIC}/login/start?redirect=%2Fmcp-oauth%2Fconsent%3Frequest%3Dabc"
