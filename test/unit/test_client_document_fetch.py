"""Fetching client metadata documents (oauth.client_documents) from a real HTTP server on loopback, and a
sign-in by such a client through the sign-in's routes (Starlette's test client, a sqlite file)."""

import http.server
import json
import threading
import time
from contextlib import contextmanager
from urllib.parse import (
    parse_qs,
    urlsplit,
)

import anyio
import pytest
from sqlalchemy import create_engine

from galaxy_mcp_analysis.core import client_documents as limits
from galaxy_mcp_analysis.core import oauth as rules
from galaxy_mcp_analysis.core.settings import Settings
from galaxy_mcp_analysis.oauth.client_documents import ClientDocuments
from galaxy_mcp_analysis.oauth.routes import signing_key
from galaxy_mcp_analysis.oauth.storage import SignInStore

from test_oauth_server import (
    BASE,
    exchange,
    make_server,
    REDIRECT,
    tables,
    token,
    VERIFIER,
)


@contextmanager
def document_host():
    """A loopback HTTP server: ``pages[path] = (status, headers, body)``; ``hits[path]`` counts requests;
    a body that is a number is that many seconds of silence."""
    pages, hits = {}, {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            hits[self.path] = hits.get(self.path, 0) + 1
            status, headers, body = pages[self.path]
            if isinstance(body, float):
                time.sleep(body)
                body = b"{}"
            self.send_response(status)
            for name, value in {"content-length": str(len(body)), **headers}.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", pages, hits
    finally:
        server.shutdown()
        server.server_close()


def serve(pages, base, path, headers=None, status=200, **fields) -> str:
    url = base + path
    body = json.dumps({"client_id": url, "client_name": "Loopback agent", "redirect_uris": [REDIRECT], **fields})
    pages[path] = (status, {"content-type": "application/json", **(headers or {})}, body.encode())
    return url


@pytest.fixture
def host():
    with document_host() as served:
        yield served


def fetcher(tmp_path, development=True) -> ClientDocuments:
    store = SignInStore(create_engine(f"sqlite:///{tmp_path / 'oauth.sqlite'}"))
    store.create_tables()
    return ClientDocuments(store, development)


def client_or_refusal(documents, url):
    async def ask():
        try:
            return await documents.client(url)
        except rules.OAuthRuleError as refusal:
            return refusal.description

    return anyio.run(ask)


def test_a_document_is_fetched_once_for_its_lifetime_and_its_client_stored(tmp_path, host):
    base, pages, hits = host
    url = serve(pages, base, "/agent.json", {"cache-control": "max-age=3600"})
    documents = fetcher(tmp_path)
    client = client_or_refusal(documents, url)
    assert client.client_id == url and client.client_name == "Loopback agent"
    assert [str(uri) for uri in client.redirect_uris] == [REDIRECT] and client.token_endpoint_auth_method == "none"
    assert client.scope == " ".join(rules.SCOPES)
    assert client_or_refusal(documents, url).client_id == url and hits["/agent.json"] == 1  # kept
    stored = json.loads(documents.store.client_info(limits.stored_client_id(url)))
    assert stored["client_id"] == url and stored["client_name"] == "Loopback agent"
    documents._kept[url] = (time.monotonic() - 1, client)  # its hour has passed
    pages["/agent.json"] = (200, {}, json.dumps({"client_id": url, "client_name": "Renamed",
                                                  "redirect_uris": [REDIRECT]}).encode())
    assert client_or_refusal(documents, url).client_name == "Renamed" and hits["/agent.json"] == 2
    assert json.loads(documents.store.client_info(limits.stored_client_id(url)))["client_name"] == "Renamed"


def test_outside_development_a_loopback_document_is_refused_before_any_request(tmp_path, host):
    base, pages, hits = host
    url = serve(pages, base, "/agent.json")
    assert "must be https" in client_or_refusal(fetcher(tmp_path, development=False), url)
    https = url.replace("http://", "https://")  # https to a loopback address: the address is refused
    assert "public addresses only" in client_or_refusal(fetcher(tmp_path, development=False), https)
    named = https.replace("127.0.0.1", "localhost")  # and a name resolving to one
    assert "public addresses only" in client_or_refusal(fetcher(tmp_path, development=False), named)
    assert hits == {}


def test_a_redirect_is_not_followed(tmp_path, host):
    base, pages, hits = host
    target = serve(pages, base, "/real.json")
    pages["/moved.json"] = (302, {"location": target}, b"")
    assert "redirects are not followed" in client_or_refusal(fetcher(tmp_path), base + "/moved.json")
    assert "/real.json" not in hits


def test_a_refused_document_names_why(tmp_path, host):
    base, pages, _ = host
    documents = fetcher(tmp_path)
    assert "HTTP 404" in client_or_refusal(documents, serve(pages, base, "/gone.json", status=404))
    other = serve(pages, base, "/other.json")
    pages["/copied.json"] = pages["/other.json"]  # served at another URL than it names
    assert "is not the URL" in client_or_refusal(documents, base + "/copied.json")
    assert f"over {limits.MAX_DOCUMENT_BYTES}" in client_or_refusal(
        documents, serve(pages, base, "/big.json", client_name="x" * 20_000))
    pages["/big.json"] = (200, {"content-length": str(10**9)}, b"x" * (limits.MAX_DOCUMENT_BYTES + 10))
    assert f"over {limits.MAX_DOCUMENT_BYTES}" in client_or_refusal(documents, base + "/big.json")
    assert "compressed" in client_or_refusal(
        documents, serve(pages, base, "/gz.json", {"content-encoding": "gzip"}))
    assert "could not be fetched" in client_or_refusal(documents, "http://127.0.0.1:9/nothing-listens.json")
    assert other  # served, never asked for


def test_the_whole_fetch_has_one_time_limit(tmp_path, host, monkeypatch):
    base, pages, _ = host
    monkeypatch.setattr(limits, "FETCH_SECONDS", 0.5)
    pages["/slow.json"] = (200, {}, 3.0)
    began = time.monotonic()
    assert "did not arrive within 0.5 s" in client_or_refusal(fetcher(tmp_path), base + "/slow.json")
    assert time.monotonic() - began < 2.5


# --- Through the sign-in's routes ----------------------------------------------------------------------


def test_the_metadata_advertises_documents_and_the_iss_parameter(tmp_path):
    metadata = make_server(tmp_path).get("/.well-known/oauth-authorization-server").json()
    assert metadata["client_id_metadata_document_supported"] is True
    assert metadata["authorization_response_iss_parameter_supported"] is True
    assert metadata["registration_endpoint"]  # dynamic registration stays for older clients


def authorize(server, client_id, **params):
    query = {"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT, "state": "st",
             "code_challenge": rules.s256(VERIFIER), "code_challenge_method": "S256", "resource": f"{BASE}/api/mcp",
             **params}
    return server.get("/mcp-oauth/authorize", params=query, follow_redirects=False)


def test_a_client_known_by_its_document_signs_in_refreshes_and_is_listed_by_its_url(tmp_path, host):
    base, pages, _ = host
    url = serve(pages, base, "/agent.json", application_type="native")
    server = make_server(tmp_path, Settings(oauth_development=True))
    response = authorize(server, url)
    assert response.status_code == 302 and "/mcp-oauth/consent?" in response.headers["location"]
    pending = rules.unsign(parse_qs(urlsplit(response.headers["location"]).query)["request"][0], signing_key("s" * 16))
    issued = exchange(server, url, server.sign_in.provider.issue_code(pending, user_id=7)).json()
    granted = server.sign_in.provider.access_token(issued["access_token"])
    assert granted.client_id == url and granted.client_name == "Loopback agent" and granted.user_id == 7
    refreshed = token(server, url, grant_type="refresh_token", refresh_token=issued["refresh_token"])
    assert refreshed.status_code == 200, refreshed.text
    assert [grant["client_id"] for grant in server.sign_in.store.grants()] == [url]
    assert server.sign_in.store.revoke(client_id=url) == 1
    assert tables(server)["mcp_oauth_client"] == 1


def test_a_refused_document_is_answered_with_why_and_never_redirected(tmp_path, host):
    base, pages, _ = host
    url = serve(pages, base, "/agent.json")
    refused = authorize(make_server(tmp_path), url)  # development off: loopback http refused
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_request"
    assert "must be https" in refused.json()["error_description"] and "location" not in refused.headers
    elsewhere = authorize(make_server(tmp_path, Settings(oauth_development=True)), url,
                          redirect_uri="http://127.0.0.1:9/not-in-the-document")
    assert elsewhere.status_code == 400 and "location" not in elsewhere.headers


def test_the_sdks_error_redirects_carry_iss(tmp_path):
    server = make_server(tmp_path)
    client_id = server.post("/mcp-oauth/register", json={"redirect_uris": [REDIRECT], "scope": "galaxy:read"}).json()
    answer = authorize(server, client_id["client_id"], scope="galaxy:write")  # not registered: invalid_scope
    assert answer.status_code == 302
    query = parse_qs(urlsplit(answer.headers["location"]).query)
    issuer = server.get("/.well-known/oauth-authorization-server").json()["issuer"]
    assert query["error"] == ["invalid_scope"] and query["iss"] == [issuer] and query["state"] == ["st"]
    consent = authorize(server, client_id["client_id"])  # to our consent page: no iss there
    assert "iss=" not in consent.headers["location"]
