"""OAuth 2.1 sign-in for /api/mcp (issue 40) on `GALAXY_MCP_ANALYSIS_OAUTH=true make serve`'s Galaxy.

One extra Galaxy for the module (make serve's launcher, sign-in on). One test signs in with a real
Chromium on Galaxy's login page for the official SDK client (``mcp.client.auth``); elsewhere the browser's
part is an HTTP client with a cookie jar (``/user/login`` with the session's CSRF token, what Galaxy's
login page posts, then the consent form). Every bad input of item 6 is a test that fails if anything was issued.
Issue 52's sign-in of 2026: a client known by its metadata document (served over https on loopback by the
module, ``ClientDocumentHost``; make serve's development setting lets Galaxy fetch from loopback), ``iss`` on
every authorization response, ``application_type`` at registration.
"""

import asyncio
import json
import re
import subprocess
import sys
import time
from urllib.parse import (
    parse_qs,
    urlsplit,
)

import httpx
import pytest

from conftest import TEST_DATABASE
from galaxy_mcp_analysis.core import oauth as rules
from galaxy_mcp_analysis.testing import (
    LaunchedGalaxy,
    McpClient,
    rest,
)
from galaxy_mcp_analysis.testing.oauth import (
    allow,
    answer_at_loopback,
    authorize_url,
    browser,
    ClientDocumentHost,
    code_result,
    consent_form,
    decide_in_browser,
    exchange,
    MemoryStorage,
    REDIRECT,
    register,
    sdk_calls,
    sdk_provider,
    signed_in_tokens,
)
from test_web_ui import (
    CHROMIUM,
    CHROMIUM_ARGS,
    UI_TIMEOUT_MS,
)

pytestmark = pytest.mark.integration



@pytest.fixture(scope="module")
def documents(tmp_path_factory):
    host = ClientDocumentHost(tmp_path_factory.mktemp("client-documents")).start()
    yield host
    host.stop()


@pytest.fixture(scope="module")
def galaxy(tmp_path_factory, new_database_url, documents):
    directory = tmp_path_factory.mktemp("oauth-galaxy")
    audit_log = directory / "audit.jsonl"
    server = LaunchedGalaxy(directory / "data", database_url=new_database_url(),
                            env={"GALAXY_MCP_ANALYSIS_OAUTH": "true", "GALAXY_MCP_ANALYSIS_AUDIT_LOG": str(audit_log),
                                 "SSL_CERT_FILE": str(documents.cert_file)})  # trusts the documents' certificate
    server.audit_log = audit_log
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def people(galaxy):
    """Two regular users with passwords (the browser logs in as them) and their API keys."""
    made = {}
    for name in ("alice", "bob"):
        password = f"password-{name}-oauth"
        user = rest(galaxy.galaxy_url, "/api/users", galaxy.admin_api_key,
                    {"username": name, "email": f"{name}@example.org", "password": password})
        key = rest(galaxy.galaxy_url, f"/api/users/{user['id']}/api_key", galaxy.admin_api_key, {})
        made[name] = {"email": f"{name}@example.org", "password": password, "key": key, "id": user["id"]}
    return made


def mcp_post(galaxy, headers=None, body=None) -> httpx.Response:
    body = body or {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    return httpx.post(galaxy.mcp_url, json=body, timeout=60, headers={
        "accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18", **(headers or {})})


def oauth_command(galaxy, *args) -> str:
    out = subprocess.run([sys.executable, "-m", "galaxy_mcp_analysis.cli", "oauth", "--config",
                          str(galaxy.data_dir / "galaxy.yml"), *args], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def grant_rows(galaxy) -> list[str]:
    return oauth_command(galaxy, "list", "--all").splitlines()[1:]


# --- Items 1 and 2: switched on, discovery ---------------------------------------------------------


def test_no_credential_is_401_pointing_at_the_resource_metadata(galaxy):
    response = mcp_post(galaxy)
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    metadata_url = re.search(r'resource_metadata="([^"]+)"', challenge).group(1)
    assert metadata_url == galaxy.galaxy_url + "/.well-known/oauth-protected-resource/api/mcp"
    resource = httpx.get(metadata_url, timeout=60).json()
    assert resource["resource"] == galaxy.mcp_url
    assert [url.rstrip("/") for url in resource["authorization_servers"]] == [galaxy.galaxy_url]
    server = httpx.get(f"{galaxy.galaxy_url}/.well-known/oauth-authorization-server", timeout=60).json()
    assert server["issuer"].rstrip("/") == galaxy.galaxy_url
    assert server["code_challenge_methods_supported"] == ["S256"]
    assert set(server["grant_types_supported"]) == {"authorization_code", "refresh_token"}
    assert server["registration_endpoint"] and server["revocation_endpoint"]
    assert server["client_id_metadata_document_supported"] is True
    assert server["authorization_response_iss_parameter_supported"] is True


def test_api_keys_work_as_before_and_an_oauth_token_is_no_rest_api_key(galaxy, people):
    with McpClient(galaxy.mcp_url, headers={"x-api-key": people["alice"]["key"]}) as client:
        assert client.call_ok("get_user")["email"] == "alice@example.org"
    with McpClient(galaxy.mcp_url, headers={"authorization": f"Bearer {people['alice']['key']}"}) as client:
        assert client.call_ok("get_user")["email"] == "alice@example.org"
    _, tokens = signed_in_tokens(galaxy, people["alice"])
    response = httpx.get(f"{galaxy.galaxy_url}/api/users/current", timeout=60,
                         headers={"x-api-key": tokens["access_token"]})
    assert response.status_code in (401, 403), response.text  # RFC 8707: good for /api/mcp only


# --- Items 3 and 4: the sign-in, tokens, scopes, audit ----------------------------------------------


def test_a_signed_out_browser_is_sent_to_galaxys_login_and_back(galaxy):
    client_id = register(galaxy).json()["client_id"]
    with httpx.Client(follow_redirects=False, timeout=60) as client:
        consent = client.get(authorize_url(galaxy, client_id)).headers["location"]
        login = client.get(consent)
    assert login.status_code == 302
    target = urlsplit(login.headers["location"])
    assert target.path == "/login/start"
    back = urlsplit(consent)
    assert parse_qs(target.query)["redirect"][0] == f"{back.path}?{back.query}"


def test_the_consent_page_names_client_redirect_scopes_and_user_and_allow_gives_working_tokens(galaxy, people):
    client_id = register(galaxy).json()["client_id"]
    with browser(galaxy, people["alice"]) as client:
        page, fields = consent_form(client, authorize_url(galaxy, client_id))
        for shown in ("Test agent", REDIRECT, "galaxy:read", "galaxy:write", "alice@example.org", "Allow", "Deny"):
            assert shown in page
        answer = allow(client, fields)
    assert answer["state"] == "s-1" and answer["iss"] == issuer(galaxy)  # RFC 9207
    tokens = exchange(galaxy, client_id, answer["code"]).json()
    assert tokens["expires_in"] == 3600 and tokens["scope"] == "galaxy:read galaxy:write"
    with McpClient(galaxy.mcp_url, headers={"authorization": f"Bearer {tokens['access_token']}"}) as mcp:
        assert mcp.call_ok("get_user")["email"] == "alice@example.org"
        history = mcp.call_ok("create_history", name="made through OAuth")
    owned = rest(galaxy.galaxy_url, f"/api/histories/{history['id']}", people["alice"]["key"])
    assert owned["name"] == "made through OAuth"
    line = json.loads(galaxy.audit_log.read_text().splitlines()[-1])
    assert line["tool"] == "create_history" and line["oauth_client_id"] == client_id
    assert line["oauth_client_name"] == "Test agent"
    log_text = galaxy.audit_log.read_text() + galaxy.log_text()
    assert tokens["access_token"] not in log_text and tokens["refresh_token"] not in log_text


def issuer(galaxy) -> str:
    return httpx.get(f"{galaxy.galaxy_url}/.well-known/oauth-authorization-server", timeout=60).json()["issuer"]


def test_a_read_token_reads_but_a_writing_tool_is_forbidden_naming_galaxy_write(galaxy, people):
    _, tokens = signed_in_tokens(galaxy, people["alice"], scope="galaxy:read")
    assert tokens["scope"] == "galaxy:read"
    with McpClient(galaxy.mcp_url, headers={"authorization": f"Bearer {tokens['access_token']}"}) as mcp:
        listed = {tool.name for tool in mcp.list_tools()}
        assert "list_histories" in listed and "create_history" not in listed
        before = rest(galaxy.galaxy_url, "/api/histories?q=name&qv=read-scope", people["alice"]["key"])
        error = mcp.call_error("create_history", name="read-scope")
        assert error.startswith("[FORBIDDEN]") and "galaxy:write" in error
        assert rest(galaxy.galaxy_url, "/api/histories?q=name&qv=read-scope", people["alice"]["key"]) == before
        mcp.call_ok("list_histories")


def test_another_users_private_history_stays_unreachable_with_a_token(galaxy, people):
    private = rest(galaxy.galaxy_url, "/api/histories", people["bob"]["key"], {"name": "bob's own"})
    _, tokens = signed_in_tokens(galaxy, people["alice"])
    with McpClient(galaxy.mcp_url, headers={"authorization": f"Bearer {tokens['access_token']}"}) as mcp:
        error = mcp.call_error("get_history_details", history_id=private["id"])
    assert error.startswith(("[NOT_FOUND]", "[FORBIDDEN]", "[AUTHORIZATION_ERROR]")), error


def test_refresh_rotates_and_a_reused_refresh_token_revokes_the_grant(galaxy, people):
    client_id, tokens = signed_in_tokens(galaxy, people["alice"])
    url = f"{galaxy.galaxy_url}/mcp-oauth/token"
    rotated = httpx.post(url, data={"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"],
                                    "client_id": client_id}, timeout=60).json()
    assert rotated["refresh_token"] != tokens["refresh_token"]
    assert mcp_post(galaxy, {"authorization": f"Bearer {rotated['access_token']}"}).status_code == 200
    reuse = httpx.post(url, data={"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"],
                                  "client_id": client_id}, timeout=60)
    assert reuse.status_code == 400 and reuse.json()["error"] == "invalid_grant" and "access_token" not in reuse.json()
    refused = mcp_post(galaxy, {"authorization": f"Bearer {rotated['access_token']}"})
    assert refused.status_code == 401 and 'error="invalid_token"' in refused.headers["www-authenticate"]


# --- Item 5: the person's page and the admin's command --------------------------------------------


def test_the_user_revokes_one_client_on_their_page_and_the_other_keeps_working(galaxy, people):
    first_client, first = signed_in_tokens(galaxy, people["bob"])
    _, second = signed_in_tokens(galaxy, people["bob"])
    with browser(galaxy, people["bob"]) as client:
        page = client.get("/mcp-oauth/connections").text
        rows = re.findall(r"name='grant_id' value='([^']+)'><input type='hidden' name='csrf' value='([^']+)'", page)
        assert len(rows) == 2
        forged = client.post("/mcp-oauth/connections", data={"grant_id": rows[0][0]})
        assert forged.status_code == 403
        assert mcp_post(galaxy, {"authorization": f"Bearer {first['access_token']}"}).status_code == 200
        client.post("/mcp-oauth/connections", data={"grant_id": rows[0][0], "csrf": rows[0][1]})
    assert mcp_post(galaxy, {"authorization": f"Bearer {first['access_token']}"}).status_code == 401
    assert mcp_post(galaxy, {"authorization": f"Bearer {second['access_token']}"}).status_code == 200
    assert any(first_client in row and row.split("\t")[-1] != "-" for row in grant_rows(galaxy))


def test_the_admin_lists_and_revokes_a_users_grants(galaxy, people):
    _, tokens = signed_in_tokens(galaxy, people["alice"])
    assert any("alice@example.org" in row for row in grant_rows(galaxy))
    out = subprocess.run([sys.executable, "-m", "galaxy_mcp_analysis.cli", "oauth", "--config",
                          str(galaxy.data_dir / "galaxy.yml"), "revoke", "--user", "alice@example.org"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and re.match(r"revoked [1-9]\d* grant", out.stdout), out
    assert mcp_post(galaxy, {"authorization": f"Bearer {tokens['access_token']}"}).status_code == 401


# --- Item 6: bad input gets its OAuth error and grants nothing ---------------------------------------


def test_a_tampered_unknown_or_revoked_token_is_401_invalid_token(galaxy, people):
    client_id, tokens = signed_in_tokens(galaxy, people["alice"])
    token = tokens["access_token"]
    for bad in (token[:-2] + ("AA" if not token.endswith("AA") else "BB"), rules.new_token(rules.ACCESS_PREFIX)):
        response = mcp_post(galaxy, {"authorization": f"Bearer {bad}"})
        assert response.status_code == 401 and 'error="invalid_token"' in response.headers["www-authenticate"]
    revoked = httpx.post(f"{galaxy.galaxy_url}/mcp-oauth/revoke", data={"token": token, "client_id": client_id},
                         timeout=60)
    assert revoked.status_code == 200
    assert mcp_post(galaxy, {"authorization": f"Bearer {token}"}).status_code == 401


@pytest.mark.parametrize(("params", "error"), [
    ({"code_challenge_method": None}, "invalid_request"),
    ({"code_challenge_method": "plain"}, "invalid_request"),
    ({"code_challenge": None, "code_challenge_method": None}, "invalid_request"),
    ({"resource": "https://elsewhere.example/mcp"}, "invalid_target"),
    ({"redirect_uri": "https://evil.example/callback"}, "invalid_request"),
])
def test_a_bad_authorization_request_reaches_no_consent_and_no_open_redirect(galaxy, params, error):
    client_id = register(galaxy).json()["client_id"]
    response = httpx.get(authorize_url(galaxy, client_id, **params), timeout=60)
    location = response.headers.get("location", "")
    assert "/mcp-oauth/consent" not in location and "evil.example" not in location
    if response.status_code == 302:  # the SDK answers at the registered redirect URI
        assert location.startswith(REDIRECT) and parse_qs(urlsplit(location).query)["error"] == [error]
    else:
        assert response.status_code == 400 and response.json()["error"] == error


def test_a_code_twice_by_another_client_or_with_a_wrong_verifier_issues_nothing(galaxy, people):
    client_id = register(galaxy).json()["client_id"]
    other = register(galaxy).json()["client_id"]
    with browser(galaxy, people["alice"]) as client:
        _, fields = consent_form(client, authorize_url(galaxy, client_id))
        code = allow(client, fields)["code"]
    for response in (exchange(galaxy, other, code), exchange(galaxy, client_id, code, verifier="w" * 60)):
        assert response.status_code == 400 and response.json()["error"] == "invalid_grant"
    first = exchange(galaxy, client_id, code).json()
    second = exchange(galaxy, client_id, code)
    assert second.status_code == 400 and second.json()["error"] == "invalid_grant"
    assert "access_token" not in second.json()
    assert mcp_post(galaxy, {"authorization": f"Bearer {first['access_token']}"}).status_code == 401


def test_a_consent_posted_without_the_anti_forgery_value_or_denied_issues_nothing(galaxy, people):
    client_id = register(galaxy).json()["client_id"]
    with browser(galaxy, people["alice"]) as client:
        _, fields = consent_form(client, authorize_url(galaxy, client_id))
        forged = client.post("/mcp-oauth/consent", data={"request": fields["request"], "decision": "allow"})
        assert forged.status_code == 403 and "location" not in forged.headers
        with browser(galaxy, people["bob"]) as other:  # another session's form value
            assert other.post("/mcp-oauth/consent", data={**fields, "decision": "allow"}).status_code == 403
        denied = allow(client, fields, decision="deny")
    assert denied == {"error": "access_denied", "state": "s-1", "iss": issuer(galaxy)}
    assert not any(client_id in row for row in grant_rows(galaxy))


@pytest.mark.parametrize(("body", "error"), [
    ({"redirect_uris": ["http://evil.example/cb"]}, "invalid_redirect_uri"),
    ({"redirect_uris": ["https://x.example/cb#fragment"]}, "invalid_redirect_uri"),
    ({"redirect_uris": [REDIRECT], "client_name": "n" * 100_000}, "invalid_client_metadata"),
    ({"redirect_uris": [REDIRECT], "scope": "galaxy:admin"}, "invalid_client_metadata"),
    ({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "client_secret_basic"}, "invalid_client_metadata"),
    ({"redirect_uris": "not a list"}, "invalid_redirect_uri"),
    ({"redirect_uris": [REDIRECT], "application_type": "web"}, "invalid_redirect_uri"),  # a web client: no loopback
    ({"redirect_uris": [REDIRECT], "application_type": "desktop"}, "invalid_client_metadata"),
])
def test_a_bad_registration_gets_its_rfc7591_code_and_registers_nothing(galaxy, body, error):
    response = httpx.post(f"{galaxy.galaxy_url}/mcp-oauth/register", json=body, timeout=60)
    assert response.status_code == 400 and response.json()["error"] == error
    assert "client_id" not in response.json()
    malformed = httpx.post(f"{galaxy.galaxy_url}/mcp-oauth/register", content=b"{not json", timeout=60)
    assert malformed.status_code == 400 and malformed.json()["error"] == "invalid_client_metadata"


# --- Done when: the official SDK client end to end ---------------------------------------------------


def sdk_auth(galaxy, person, storage, client_metadata_url=None):
    """The official client's OAuth provider; its browser (an HTTP client) logs in through Galaxy and presses Allow."""
    answer = {}

    async def redirect_handler(url: str) -> None:
        def sign_in_and_allow():
            with browser(galaxy, person) as client:
                _, fields = consent_form(client, url)
                return allow(client, fields)

        answer.update(await asyncio.to_thread(sign_in_and_allow))

    async def callback_handler():
        return code_result(answer)

    return sdk_provider(galaxy, storage, redirect_handler, callback_handler, client_metadata_url=client_metadata_url)


def test_the_official_sdk_client_signs_in_calls_tools_and_refreshes(galaxy, people):
    storage = MemoryStorage()
    auth = sdk_auth(galaxy, people["alice"], storage)
    session_calls = lambda: asyncio.run(sdk_calls(galaxy, auth, ("get_user", {})))[0]  # noqa: E731

    assert session_calls()["email"] == "alice@example.org"  # discovery, registration, sign-in
    first = storage.tokens
    assert first.access_token.startswith(rules.ACCESS_PREFIX) and storage.client_info.client_id
    auth.context.token_expiry_time = time.time() - 1  # an hour later, as the client sees it
    assert session_calls()["email"] == "alice@example.org"
    assert storage.tokens.refresh_token != first.refresh_token  # refreshed, and rotated
    assert storage.tokens.access_token != first.access_token
    assert revoked_then_refused(galaxy, storage) == (200, 401)


def test_a_client_known_by_its_metadata_document_signs_in_with_the_official_sdk_client(galaxy, people, documents):
    """The 2026 sign-in: the SDK client gives the URL of its metadata document as its client_id (no registration);
    Galaxy fetches it once (https, from loopback under make serve's development setting), takes its redirect
    URIs, and the grant, the audit line and ``oauth list`` name the client by that URL."""
    path = "/agents/document-agent.json"
    url = documents.serve(path, client_name="Document agent", application_type="native",
                          grant_types=["authorization_code", "refresh_token"], response_types=["code"])
    storage = MemoryStorage()
    auth = sdk_auth(galaxy, people["bob"], storage, client_metadata_url=url)
    registered_before = len(grant_rows(galaxy))
    assert asyncio.run(sdk_calls(galaxy, auth, ("get_user", {})))[0]["email"] == "bob@example.org"
    assert storage.client_info.client_id == url and storage.tokens.access_token.startswith(rules.ACCESS_PREFIX)
    assert documents.hits[path] == 1  # authorize, consent and token endpoint: one fetch, then its cache
    line = json.loads(galaxy.audit_log.read_text().splitlines()[-1])
    assert line["tool"] == "get_user" and line["oauth_client_id"] == url and line["oauth_client_name"] == "Document agent"
    rows = grant_rows(galaxy)
    assert len(rows) == registered_before + 1 and any(url in row and "Document agent" in row for row in rows)
    first = storage.tokens
    auth.context.token_expiry_time = time.time() - 1  # an hour later, as the client sees it
    assert asyncio.run(sdk_calls(galaxy, auth, ("get_user", {})))[0]["email"] == "bob@example.org"
    assert storage.tokens.refresh_token != first.refresh_token  # refreshed, by the same document's client
    assert revoked_then_refused(galaxy, storage) == (200, 401)


def test_a_forged_metadata_document_signs_nobody_in(galaxy, documents):
    """A document naming another URL, one whose redirect is not the request's, and a private address: each
    answered 400 with why, no redirect, no consent page."""
    elsewhere = documents.serve("/agents/copied.json")
    documents.documents["/agents/forged.json"] = documents.documents["/agents/copied.json"]
    cases = {
        documents.base_url + "/agents/forged.json": "is not the URL",
        documents.serve("/agents/other-redirect.json", redirect_uris=["http://127.0.0.1:7/elsewhere"]): "",
        "https://10.0.0.1/agents/private.json": "public addresses only",
        documents.base_url + "/agents/missing.json": "HTTP 404",
    }
    for url, why in cases.items():
        response = httpx.get(authorize_url(galaxy, url), timeout=60)
        assert response.status_code == 400 and "location" not in response.headers, (url, response.text)
        assert response.json()["error"] == "invalid_request" and why in response.json()["error_description"], url
    assert elsewhere


def revoked_then_refused(galaxy, storage) -> tuple[int, int]:
    """RFC 7009 revocation of the SDK client's refresh token (its grant), then its access token on /api/mcp."""
    revoked = httpx.post(f"{galaxy.galaxy_url}/mcp-oauth/revoke", timeout=60, data={
        "token": storage.tokens.refresh_token, "token_type_hint": "refresh_token",
        "client_id": storage.client_info.client_id})
    return revoked.status_code, mcp_post(galaxy, {"authorization": f"Bearer {storage.tokens.access_token}"}).status_code


# --- Done when: a real browser on Galaxy's login page, for the official SDK client ------------------


async def browser_sign_ins(galaxy, person, storage, seen) -> None:
    """One Chromium: the SDK client's sign-in (Allow), its calls, its refresh; then another client denied."""
    from playwright.async_api import async_playwright

    mark = lambda phase: seen.setdefault("at", []).append((phase, time.monotonic()))  # noqa: E731
    async with async_playwright() as driver:
        chromium = await driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        mark("chromium started")
        try:
            context = await chromium.new_context()
            context.set_default_timeout(UI_TIMEOUT_MS)
            await context.route(lambda url: urlsplit(url).path == "/mcp-oauth/consent",
                                lambda route: answer_at_loopback(route, seen))
            page = await context.new_page()

            async def redirect_handler(url):
                mark("discovery and registration")
                seen["allowed"] = await decide_in_browser(page, url, person, "allow", seen)
                mark("login page, consent, Allow")

            async def callback_handler():
                return code_result(seen["allowed"])

            auth = sdk_provider(galaxy, storage, redirect_handler, callback_handler, client_name="Browser agent")
            seen["user"], seen["history"] = await sdk_calls(galaxy, auth, ("get_user", {}),
                                                            ("create_history", {"name": "signed in by a browser"}))
            seen["first"] = storage.tokens
            auth.context.token_expiry_time = time.time() - 1  # an hour later, as the client sees it
            seen["user_after_refresh"], = await sdk_calls(galaxy, auth, ("get_user", {}))
            mark("token exchange, calls, refresh")
            seen["denied_client"] = register(galaxy, client_name="Denied agent").json()["client_id"]
            seen["denied"] = await decide_in_browser(page, authorize_url(galaxy, seen["denied_client"]), person,
                                                     "deny", seen)
            await page.goto(f"{galaxy.galaxy_url}/mcp-oauth/connections")  # the person's connected clients
            seen["connections"] = await page.locator("body").inner_text()
            mark("Deny, connected clients")
        finally:
            await chromium.close()


@pytest.mark.skipif(TEST_DATABASE != "sqlite", reason="a browser test runs in the sqlite pass (doc/testing.md)")
@pytest.mark.skipif(CHROMIUM is None, reason="no chromium here (/usr/bin/chromium): run .ci/install-chromium")
def test_a_real_browser_signs_in_on_galaxys_login_page_allows_and_later_denies(galaxy):
    """The module's Galaxy is `GALAXY_MCP_ANALYSIS_OAUTH=true make serve` (its launcher, its printed demo login).
    The SDK client hands its authorize URL to Chromium: Galaxy's own login page (the web client's form), the
    consent page, Allow; then tools, a rotated refresh, revocation (401). Deny in the browser issues nothing."""
    began, storage, seen = time.monotonic(), MemoryStorage(), {}
    person = {"email": galaxy.info["demo_email"], "password": galaxy.info["demo_password"]}
    banner = galaxy.log_text()
    assert f"Sign-in on: add {galaxy.mcp_url}" in banner and galaxy.info["oauth_connections_url"] in banner
    asyncio.run(browser_sign_ins(galaxy, person, storage, seen))
    assert urlsplit(seen["login_page"]).path == "/login/start"  # Galaxy's own login page, then back
    assert set(seen["first"].scope.split()) == set(rules.SCOPES)  # both granted, each named below
    for shown in ("Browser agent", REDIRECT, *rules.SCOPES, person["email"], "Allow", "Deny"):
        assert shown in seen["consent"], (shown, seen["consent"])
    assert seen["allowed"]["state"] and "error" not in seen["allowed"]
    assert seen["user"]["email"] == seen["user_after_refresh"]["email"] == person["email"]
    owned = rest(galaxy.galaxy_url, f"/api/histories/{seen['history']['id']}", galaxy.api_key)
    assert owned["name"] == "signed in by a browser"  # the demo user's, made through the token
    first, now = seen["first"], storage.tokens
    assert first.access_token.startswith(rules.ACCESS_PREFIX) and now.access_token != first.access_token
    assert now.refresh_token != first.refresh_token  # refreshed, and rotated
    assert revoked_then_refused(galaxy, storage) == (200, 401)
    assert seen["denied"] == {"error": "access_denied", "state": "s-1", "iss": issuer(galaxy)}  # no code
    assert "Browser agent" in seen["connections"] and "Denied agent" not in seen["connections"]  # no grant
    phases = ", ".join(f"{phase} {at - before:.1f} s" for (_, before), (phase, at) in
                       zip([("", began)] + seen["at"], seen["at"]))
    print(f"\nthe real-browser sign-in: {time.monotonic() - began:.1f} s ({phases}; then the checks)")


# --- Kept across restarts (last: it restarts the module's Galaxy) ------------------------------------


def test_a_token_and_its_refresh_outlive_a_restart(galaxy, people):
    client_id, tokens = signed_in_tokens(galaxy, people["alice"])
    galaxy.stop()
    galaxy.env.update(SHORT_ACCESS)  # the lifetime tests below need it; a token issued before keeps its hour
    galaxy.start()  # same data dir, database and port: what an admin's restart is
    with McpClient(galaxy.mcp_url, headers={"authorization": f"Bearer {tokens['access_token']}"}) as mcp:
        assert mcp.call_ok("get_user")["email"] == "alice@example.org"
    rotated = httpx.post(f"{galaxy.galaxy_url}/mcp-oauth/token", timeout=60, data={
        "grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": client_id})
    assert rotated.status_code == 200 and rotated.json()["access_token"] != tokens["access_token"]


# --- Lifetimes and purge (after the restart above, which switched on a 10-second access token) ---------

SHORT_ACCESS = {"GALAXY_MCP_ANALYSIS_OAUTH_ACCESS_TOKEN_SECONDS": "10"}


def with_short_access_tokens(galaxy):
    if not SHORT_ACCESS.items() <= galaxy.env.items():  # run without the restart test before it
        galaxy.stop()
        galaxy.env.update(SHORT_ACCESS)
        galaxy.start()
    return galaxy


def test_an_access_token_expires_with_its_setting_and_the_refresh_still_works(galaxy, people):
    galaxy = with_short_access_tokens(galaxy)
    client_id, tokens = signed_in_tokens(galaxy, people["alice"])
    received = time.monotonic()
    assert tokens["expires_in"] == 10
    assert mcp_post(galaxy, {"authorization": f"Bearer {tokens['access_token']}"}).status_code == 200
    time.sleep(max(0.0, 10.5 - (time.monotonic() - received)))
    expired = mcp_post(galaxy, {"authorization": f"Bearer {tokens['access_token']}"})
    assert expired.status_code == 401 and 'error="invalid_token"' in expired.headers["www-authenticate"]
    renewed = httpx.post(f"{galaxy.galaxy_url}/mcp-oauth/token", timeout=60, data={
        "grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": client_id})
    assert renewed.status_code == 200 and renewed.json()["expires_in"] == 10
    with McpClient(galaxy.mcp_url, headers={"authorization": f"Bearer {renewed.json()['access_token']}"}) as mcp:
        assert mcp.call_ok("get_user")["email"] == "alice@example.org"


def revoked_grants_tokens(galaxy) -> int:
    from types import SimpleNamespace  # the tokens of revoked grants in the database, found as the CLI finds it
    import sqlalchemy as sa
    from galaxy_mcp_analysis.oauth.admin import database_url
    from galaxy_mcp_analysis.oauth.storage import GRANTS, TOKENS

    engine = sa.create_engine(database_url(SimpleNamespace(database_url=None, config=galaxy.data_dir / "galaxy.yml")))
    with engine.connect() as connection:
        count = connection.execute(sa.select(sa.func.count()).select_from(TOKENS.join(GRANTS)).where(
            GRANTS.c.revoked_at.is_not(None))).scalar()
    engine.dispose()
    return count


def test_purge_expired_removes_a_revoked_grants_tokens_by_kind_and_keeps_what_works(galaxy, people):
    galaxy = with_short_access_tokens(galaxy)
    assert revoked_grants_tokens(galaxy) == 0  # the start-up purge took those of the grants revoked above
    gone_client, gone = signed_in_tokens(galaxy, people["bob"])
    httpx.post(f"{galaxy.galaxy_url}/mcp-oauth/revoke", data={"token": gone["access_token"], "client_id": gone_client},
               timeout=60).raise_for_status()
    client_id, kept = signed_in_tokens(galaxy, people["bob"])
    assert revoked_grants_tokens(galaxy) == 2
    out = oauth_command(galaxy, "purge-expired")
    line = re.fullmatch(r"removed (\d+) codes, (\d+) access tokens, (\d+) refresh tokens, (\d+) expired grants; "
                        r"kept (\d+) revoked grants \(oauth list --all\)\n", out)
    assert line, out
    assert int(line[2]) >= 1 and int(line[3]) >= 1 and revoked_grants_tokens(galaxy) == 0
    revoked_rows = [row for row in grant_rows(galaxy) if row.split("\t")[-1] != "-"]
    assert int(line[5]) == len(revoked_rows) and any(gone_client in row for row in revoked_rows)
    renewed = httpx.post(  # the live grant's refresh token is kept (its 10-second access token may be gone)
        f"{galaxy.galaxy_url}/mcp-oauth/token", timeout=60, data={
        "grant_type": "refresh_token", "refresh_token": kept["refresh_token"], "client_id": client_id})
    assert renewed.status_code == 200
    assert mcp_post(galaxy, {"authorization": f"Bearer {renewed.json()['access_token']}"}).status_code == 200

