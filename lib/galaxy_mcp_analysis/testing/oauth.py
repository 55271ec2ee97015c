"""The browser's and the client's steps of an OAuth sign-in on a launched Galaxy (tests and ``make bench``).

``browser`` signs in through Galaxy's own login (the login page's session cookie, ``/user/login``
with the session's CSRF token, as Galaxy's login page posts it); the rest follow one
authorization-code flow with PKCE: ``register``, ``authorize_url``, ``consent_form``, ``allow``,
``exchange``; ``signed_in_tokens`` is all of them. ``galaxy`` is anything with ``galaxy_url`` and
``mcp_url`` (a ``LaunchedGalaxy``). ``sdk_provider`` is the official MCP SDK client's side
(``mcp.client.auth.OAuthClientProvider`` with ``MemoryStorage``), whatever plays the browser;
``sdk_calls`` one MCP session of that client. ``decide_in_browser`` is a real browser's part (a playwright
page on Galaxy's login and consent pages), ``answer_at_loopback`` its routing of the consent form's answer.
``ClientDocumentHost`` serves client metadata documents over https on loopback, under a certificate of its own
that the Galaxy fetching them trusts through ``SSL_CERT_FILE``.
"""

import datetime
import http.server
import ipaddress
import json
import re
import ssl
import threading
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import (
    parse_qs,
    urlsplit,
)

import httpx

from galaxy_mcp_analysis.core import oauth as rules

REDIRECT = "http://127.0.0.1:9/callback"
VERIFIER = "v" * 60


@contextmanager
def browser(galaxy, person):
    """An HTTP client signed in to Galaxy as ``person`` through Galaxy's own login (session cookie)."""
    with httpx.Client(base_url=galaxy.galaxy_url, follow_redirects=False, timeout=60) as client:
        assert client.get("/login/start").status_code == 200  # Galaxy's login page: the session cookie
        csrf = client.get("/context").json()["session_csrf_token"]
        response = client.post("/user/login", json={"login": person["email"], "password": person["password"],
                                                     "session_csrf_token": csrf})
        assert response.status_code == 200, response.text
        assert client.cookies.get("galaxysession")
        yield client


def register(galaxy, **fields) -> httpx.Response:
    body = {"redirect_uris": [REDIRECT], "client_name": "Test agent", "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"], **fields}
    return httpx.post(f"{galaxy.galaxy_url}/mcp-oauth/register", json=body, timeout=60)


def authorize_url(galaxy, client_id, **params) -> str:
    query = {"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT, "state": "s-1",
             "code_challenge": rules.s256(VERIFIER), "code_challenge_method": "S256", "resource": galaxy.mcp_url,
             **params}
    return str(httpx.URL(f"{galaxy.galaxy_url}/mcp-oauth/authorize",
                         params={k: v for k, v in query.items() if v is not None}))


def consent_form(client: httpx.Client, url: str) -> tuple[str, dict]:
    """Follow /authorize to the consent page; its page text and the form's hidden fields."""
    response = client.get(url)
    assert response.status_code == 302, response.text
    page = client.get(response.headers["location"])
    assert page.status_code == 200, page.text
    fields = dict(re.findall(r"name='(request|csrf)' value='([^']*)'", page.text))
    return page.text, fields


def allow(client: httpx.Client, fields: dict, decision="allow") -> dict:
    response = client.post("/mcp-oauth/consent", data={**fields, "decision": decision})
    assert response.status_code == 302, response.text
    location = response.headers["location"]
    assert location.startswith(REDIRECT)
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


def exchange(galaxy, client_id, code, verifier=VERIFIER, http=httpx) -> httpx.Response:
    """The code's token request (``http``: an ``httpx.Client`` holding one connection, or a new one)."""
    return http.post(f"{galaxy.galaxy_url}/mcp-oauth/token", timeout=60, data={
        "grant_type": "authorization_code", "code": code, "code_verifier": verifier, "client_id": client_id,
        "redirect_uri": REDIRECT})


def signed_in_tokens(galaxy, person, scope=None, http=httpx) -> tuple[str, dict]:
    client_id = register(galaxy).json()["client_id"]
    with browser(galaxy, person) as client:
        _, fields = consent_form(client, authorize_url(galaxy, client_id, scope=scope))
        code = allow(client, fields)["code"]
    issued = exchange(galaxy, client_id, code, http=http)
    assert issued.status_code == 200, issued.text
    return client_id, issued.json()


class MemoryStorage:
    """The SDK client's token storage (``mcp.client.auth.TokenStorage``), in memory."""

    tokens = client_info = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info):
        self.client_info = client_info


def sdk_provider(galaxy, storage, redirect_handler, callback_handler, client_name="SDK client",
                 client_metadata_url=None):
    """The official SDK client's OAuth provider (discovery, registration, code exchange, refresh):
    ``redirect_handler(url)`` plays the browser, ``callback_handler()`` returns what came back to REDIRECT;
    with ``client_metadata_url`` the client is known by that metadata document instead of registering."""
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientMetadata

    metadata = OAuthClientMetadata(client_name=client_name, redirect_uris=[REDIRECT], token_endpoint_auth_method="none",
                                   grant_types=["authorization_code", "refresh_token"], response_types=["code"])
    return OAuthClientProvider(galaxy.mcp_url, metadata, storage, redirect_handler, callback_handler,
                               client_metadata_url=client_metadata_url)


def code_result(answer: dict):
    """What a client's loopback listener hands the SDK client: the code, state and RFC 9207 issuer it came back with."""
    from mcp.shared.auth import AuthorizationCodeResult

    return AuthorizationCodeResult(code=answer["code"], state=answer.get("state"), iss=answer.get("iss"))


class ClientDocumentHost:
    """Client metadata documents over https on 127.0.0.1 (the official SDK client takes only an https
    ``client_metadata_url``), under a self-signed certificate written to ``cert_file``, which the Galaxy that
    fetches them is given as ``SSL_CERT_FILE``. ``serve(path, **fields)`` publishes a document naming its own
    URL; ``hits[path]`` counts the fetches. ``start()``/``stop()``."""

    def __init__(self, directory: Path):
        self.cert_file, self.key_file = directory / "documents-cert.pem", directory / "documents-key.pem"
        self.documents: dict[str, bytes] = {}
        self.hits: dict[str, int] = {}
        self.server = None

    def start(self) -> "ClientDocumentHost":
        _self_signed_loopback_certificate(self.cert_file, self.key_file)
        documents, hits = self.documents, self.hits

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                hits[self.path] = hits.get(self.path, 0) + 1
                body = documents.get(self.path)
                self.send_response(200 if body is not None else 404)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body or b"")))
                self.end_headers()
                self.wfile.write(body or b"")

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert_file, self.key_file)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        threading.Thread(target=self.server.serve_forever, name="client-documents", daemon=True).start()
        return self

    @property
    def base_url(self) -> str:
        return f"https://127.0.0.1:{self.server.server_address[1]}"

    def serve(self, path: str, **fields) -> str:
        url = self.base_url + path
        self.documents[path] = json.dumps({"client_id": url, "redirect_uris": [REDIRECT],
                                           "token_endpoint_auth_method": "none", **fields}).encode()
        return url

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


def _self_signed_loopback_certificate(cert_file: Path, key_file: Path) -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                   .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
                   .not_valid_after(now + datetime.timedelta(days=1))
                   .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                                  critical=False)
                   .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                   .sign(key, hashes.SHA256()))
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))


async def sdk_calls(galaxy, auth, *tools) -> list:
    """One MCP session of the official client with OAuth ``auth``: each (tool, arguments)'s structured result."""
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(auth=auth, timeout=120) as http:
        async with streamable_http_client(galaxy.mcp_url, http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                return [(await session.call_tool(tool, arguments)).structured_content for tool, arguments in tools]


async def decide_in_browser(page, url, person, decision, seen) -> dict:
    """Chromium opens ``url``; sent to Galaxy's login page, it types ``person``'s login there; on the consent page
    it presses ``decision`` (allow, deny). The query of the redirect to REDIRECT (caught by ``answer_at_loopback``)."""
    await page.goto(url)
    if "/login/start" in page.url:
        seen["login_page"] = page.url
        await page.locator("#login-form-name").fill(person["email"])
        await page.locator("#login-form-password").fill(person["password"])
        await page.get_by_role("button", name="Login", exact=True).click()
    await page.wait_for_url(re.compile(r"/mcp-oauth/consent\?"))
    seen.setdefault("consent", await page.locator("body").inner_text())
    await page.locator(f"#{decision}").click()
    await page.get_by_text(LOOPBACK_PAGE).wait_for()
    return {k: v[0] for k, v in parse_qs(urlsplit(seen["redirects"][-1]).query).items()}


LOOPBACK_PAGE = "Signed in: back to your MCP client."


async def answer_at_loopback(route, seen) -> None:
    """playwright's routing of the consent form's POST: Galaxy's answer is fetched for the browser; its redirect
    to the loopback REDIRECT is recorded and shown as the page a client's loopback listener shows (routing never
    sees a redirect's target, and nothing listens at REDIRECT); any other answer reaches the browser as it is."""
    if route.request.method != "POST":
        return await route.continue_()
    response = await route.fetch(max_redirects=0)
    location = response.headers.get("location", "")
    if not location.startswith(REDIRECT):
        return await route.fulfill(response=response)
    seen.setdefault("redirects", []).append(location)
    await route.fulfill(status=200, content_type="text/html", body=f"<p>{LOOPBACK_PAGE}</p>")
