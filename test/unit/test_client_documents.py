"""The rules of client metadata documents (core.client_documents) and of application_type (core.oauth)."""

import json

import pytest

from galaxy_mcp_analysis.core import client_documents as documents
from galaxy_mcp_analysis.core import oauth as rules

URL = "https://agent.example.org/oauth/client.json"


def refused(call, *args, error="invalid_client", **kwargs) -> str:
    with pytest.raises(rules.OAuthRuleError) as raised:
        call(*args, **kwargs)
    assert raised.value.error == error, raised.value.description
    return raised.value.description


def document(**fields) -> bytes:
    return json.dumps({"client_id": URL, "client_name": "Agent", "redirect_uris": ["http://127.0.0.1:3000/cb"],
                       **fields}).encode()


def test_a_client_id_is_a_document_only_when_it_is_a_url_and_its_key_fits_the_column():
    assert documents.is_document_client_id(URL) and documents.is_document_client_id("http://127.0.0.1/c.json")
    assert not documents.is_document_client_id("0b5f2c1e-5a4d-4c9e-9a53-1f7d0c6f1a2b")
    assert not documents.is_document_client_id(None)
    key = documents.stored_client_id(URL + "/" + "x" * 1500)
    assert key.startswith(documents.STORED_KEY_PREFIX) and len(key) <= 64
    assert key != documents.stored_client_id(URL) and documents.stored_client_id(URL) == documents.stored_client_id(URL)
    assert documents.stored_client_id("registered-id") == "registered-id"


@pytest.mark.parametrize(("url", "why"), [
    ("http://agent.example.org/client.json", "must be https"),
    ("http://127.0.0.1:8000/client.json", "must be https"),  # loopback http: development only
    ("https://agent.example.org", "must have a path"),
    ("https://agent.example.org/", "must have a path"),
    ("https://agent.example.org/a/../client.json", "'..'"),
    ("https://agent.example.org/./client.json", "'.'"),
    ("https://user:pw@agent.example.org/client.json", "user information"),
    ("https://agent.example.org/client.json#frag", "fragment"),
    ("ftp://agent.example.org/client.json", "must be https"),
    ("https://agent.example.org:99999/client.json", "not a URL"),
    ("https://agent.example.org/" + "x" * 2100, "at most"),
])
def test_a_client_id_url_is_https_with_a_clean_path(url, why):
    assert why in refused(documents.check_document_url, url)


def test_development_allows_loopback_http_but_no_other_http():
    assert documents.check_document_url("http://127.0.0.1:8000/client.json", development=True).port == 8000
    assert documents.check_document_url("http://localhost:8000/client.json", development=True).hostname == "localhost"
    refused(documents.check_document_url, "http://agent.example.org/client.json", development=True)
    assert documents.check_document_url(URL).hostname == "agent.example.org"


@pytest.mark.parametrize("address", [
    "127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0",
    "::1", "fe80::1%eth0", "fc00::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "224.0.0.1", "::",
])
def test_private_loopback_link_local_and_reserved_addresses_are_refused(address):
    assert "public addresses only" in refused(documents.check_address, address)


def test_public_addresses_pass_and_development_adds_loopback_only():
    for address in ("93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946", "::ffff:93.184.216.34"):
        documents.check_address(address)
    for address in ("127.0.0.1", "::1", "::ffff:127.0.0.1"):
        documents.check_address(address, development=True)
    refused(documents.check_address, "10.0.0.1", development=True)
    refused(documents.check_address, "169.254.169.254", development=True)
    refused(documents.check_address, "not-an-ip")


def test_a_document_must_name_its_own_url_and_follow_the_registration_rules():
    metadata = documents.check_document(URL, document())
    assert metadata["token_endpoint_auth_method"] == "none" and metadata["client_name"] == "Agent"
    assert "is not the URL" in refused(documents.check_document, URL, document(client_id=URL + "?x=1"))
    assert "is not the URL" in refused(documents.check_document, URL, document(client_id=None))
    assert "client secret" in refused(documents.check_document, URL, document(client_secret="s3cret"))
    assert f"over {documents.MAX_DOCUMENT_BYTES}" in refused(
        documents.check_document, URL, document(client_name="x" * documents.MAX_DOCUMENT_BYTES))
    refused(documents.check_document, URL, b"[1, 2]", error="invalid_client_metadata")
    refused(documents.check_document, URL, b"\xff not json", error="invalid_client_metadata")
    refused(documents.check_document, URL, document(redirect_uris=["http://evil.example/cb"]), error="invalid_redirect_uri")
    refused(documents.check_document, URL, document(token_endpoint_auth_method="private_key_jwt"),
            error="invalid_client_metadata")
    refused(documents.check_document, URL, document(application_type="web"), error="invalid_redirect_uri")


@pytest.mark.parametrize(("header", "seconds"), [
    (None, documents.CACHE_DEFAULT_SECONDS),
    ("", documents.CACHE_DEFAULT_SECONDS),
    ("public, max-age=3600", 3600),
    ("max-age=\"120\"", 120),
    ("max-age=5", documents.CACHE_MIN_SECONDS),
    ("no-store", documents.CACHE_MIN_SECONDS),
    ("max-age=600, no-cache", documents.CACHE_MIN_SECONDS),
    ("max-age=99999999", documents.CACHE_MAX_SECONDS),
    ("s-maxage=7200", documents.CACHE_DEFAULT_SECONDS),  # a shared cache's lifetime is not ours
])
def test_the_cache_lifetime_follows_max_age_within_bounds(header, seconds):
    assert documents.cache_seconds(header) == seconds


def test_application_type_sets_which_redirects_a_client_may_use():
    assert rules.check_application_type(None) is None and rules.check_application_type("web") == "web"
    refused(rules.check_application_type, "desktop", error="invalid_client_metadata")
    rules.check_redirect_uri("https://app.example.org/cb", "web")
    for loopback in ("http://127.0.0.1:9/cb", "https://localhost/cb", "https://[::1]/cb"):
        assert "web client" in refused(rules.check_redirect_uri, loopback, "web", error="invalid_redirect_uri")
        rules.check_redirect_uri(loopback, "native")
        rules.check_redirect_uri(loopback)  # an older client naming no type: as before
    rules.check_redirect_uri("https://app.example.org/cb", "native")
    refused(rules.check_redirect_uri, "http://app.example.org/cb", "native", error="invalid_redirect_uri")


def test_registration_checks_application_type_with_its_redirects():
    body = {"redirect_uris": ["http://127.0.0.1:9/cb"], "token_endpoint_auth_method": "none"}
    assert rules.check_registration(json.dumps({**body, "application_type": "native"}).encode())["application_type"] == "native"
    assert "application_type" not in rules.check_registration(json.dumps(body).encode())
    refused(rules.check_registration, json.dumps({**body, "application_type": "web"}).encode(), error="invalid_redirect_uri")
    refused(rules.check_registration, json.dumps({**body, "application_type": 3}).encode(), error="invalid_client_metadata")
