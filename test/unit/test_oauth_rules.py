"""The sign-in's pure rules (core.oauth): PKCE, redirect URIs, registration, scopes, tokens, signed values."""

import json
import time

import pytest

from galaxy_mcp_analysis.core import oauth as rules

VERIFIER = "v" * 43 + "-._~"
KEY = b"k" * 32


def refused(error, call, *args, **kwargs):
    with pytest.raises(rules.OAuthRuleError) as raised:
        call(*args, **kwargs)
    assert raised.value.error == error, raised.value.description
    return raised.value.description


def test_s256_is_the_only_method_and_missing_is_not_s256():
    rules.check_challenge("S256", rules.s256(VERIFIER))
    assert "plain" in refused("invalid_request", rules.check_challenge, "plain", rules.s256(VERIFIER))
    assert "missing" in refused("invalid_request", rules.check_challenge, None, rules.s256(VERIFIER))
    refused("invalid_request", rules.check_challenge, "S256", None)
    refused("invalid_request", rules.check_challenge, "S256", VERIFIER)  # a verifier sent as the challenge


def test_the_verifier_must_hash_to_the_challenge():
    challenge = rules.s256(VERIFIER)
    assert rules.verifier_matches(VERIFIER, challenge)
    assert not rules.verifier_matches(VERIFIER + "x", challenge)
    assert not rules.verifier_matches("short", rules.s256("short"))  # under 43 characters
    assert not rules.verifier_matches("", challenge)


@pytest.mark.parametrize("uri", ["https://client.example/cb", "http://127.0.0.1:3334/callback",
                                 "http://localhost/cb", "http://[::1]:80/cb", "https://x.example/cb?a=1"])
def test_https_and_loopback_redirects_are_accepted(uri):
    assert rules.check_redirect_uri(uri) == uri


@pytest.mark.parametrize("uri", ["http://client.example/cb", "javascript:alert(1)", "custom-app:/cb",
                                 "https://x.example/cb#frag", "https://user:pw@x.example/cb", "", 7,
                                 "https://" + "a" * 2001, "http://127.0.0.1.evil.example/cb", "//x.example/cb"])
def test_other_redirects_are_refused(uri):
    refused("invalid_redirect_uri", rules.check_redirect_uri, uri)


def registration(**fields):
    return json.dumps({"redirect_uris": ["http://127.0.0.1:9/cb"], "client_name": "c", **fields}).encode()


def test_a_public_client_registers_and_no_method_means_public():
    assert rules.check_registration(registration())["token_endpoint_auth_method"] == "none"
    assert rules.check_registration(registration(token_endpoint_auth_method="none", scope="galaxy:read"))


@pytest.mark.parametrize(("body", "error"), [
    (b"{", "invalid_client_metadata"),
    (b"[]", "invalid_client_metadata"),
    (b"\xff\xfe", "invalid_client_metadata"),
    (registration(padding="x" * rules.MAX_REGISTRATION_BYTES), "invalid_client_metadata"),
    (registration(client_name="n" * 201), "invalid_client_metadata"),
    (registration(client_name=["not", "a", "string"]), "invalid_client_metadata"),
    (registration(token_endpoint_auth_method="client_secret_post"), "invalid_client_metadata"),
    (registration(scope="galaxy:admin"), "invalid_client_metadata"),
    (registration(redirect_uris=[]), "invalid_redirect_uri"),
    (registration(redirect_uris="https://x.example/cb"), "invalid_redirect_uri"),
    (registration(redirect_uris=["http://evil.example/cb"]), "invalid_redirect_uri"),
    (registration(redirect_uris=[f"https://x.example/{i}" for i in range(11)]), "invalid_redirect_uri"),
])
def test_bad_registrations_are_refused_with_their_rfc7591_code(body, error):
    refused(error, rules.check_registration, body)


def test_scopes_and_what_they_reach():
    assert rules.check_scopes("galaxy:write galaxy:read galaxy:read") == ["galaxy:read", "galaxy:write"]
    assert "galaxy:admin" in refused("invalid_scope", rules.check_scopes, "galaxy:read galaxy:admin")
    refused("invalid_scope", rules.check_scopes, " ")
    assert rules.allows(["galaxy:read"], read_only=True)
    assert not rules.allows(["galaxy:read"], read_only=False)
    assert rules.allows(["galaxy:write"], read_only=False) and rules.allows(["galaxy:write"], read_only=True)
    assert not rules.allows([], read_only=True)
    assert rules.needed_scope(False) == "galaxy:write" and rules.needed_scope(True) == "galaxy:read"


def test_tokens_are_random_prefixed_and_stored_as_a_hash():
    first, second = rules.new_token(rules.ACCESS_PREFIX), rules.new_token(rules.ACCESS_PREFIX)
    assert first != second and first.startswith("gxmcp_at_") and len(first) > 40
    assert rules.token_hash(first) != first and len(rules.token_hash(first)) == 64
    assert rules.is_oauth_token(first) and not rules.is_oauth_token("f" * 32) and not rules.is_oauth_token(None)


def test_refresh_rotates_once_and_a_reuse_revokes_the_grant():
    future = time.time() + 60
    assert rules.refresh_verdict(used=False, revoked=False, grant_revoked=False, expires_at=future).rotate
    reused = rules.refresh_verdict(used=True, revoked=False, grant_revoked=False, expires_at=future)
    assert not reused.rotate and reused.revoke_grant
    expired = rules.refresh_verdict(used=False, revoked=False, grant_revoked=False, expires_at=time.time() - 1)
    assert not expired.rotate and not expired.revoke_grant
    assert not rules.refresh_verdict(used=False, revoked=False, grant_revoked=True, expires_at=future).rotate


def test_signed_requests_refuse_tampering_other_keys_and_expiry():
    value = rules.sign({"client_id": "c", "exp": time.time() + 60}, KEY)
    assert rules.unsign(value, KEY)["client_id"] == "c"
    body, _, mac = value.partition(".")
    tampered = rules.sign({"client_id": "other", "exp": time.time() + 60}, KEY).partition(".")[0] + "." + mac
    refused("invalid_request", rules.unsign, tampered, KEY)
    refused("invalid_request", rules.unsign, value, b"other key")
    refused("invalid_request", rules.unsign, "", KEY)
    assert "expired" in refused("invalid_request", rules.unsign, rules.sign({"exp": time.time() - 1}, KEY), KEY)


def test_the_anti_forgery_value_is_bound_to_the_session_and_the_request():
    value = rules.anti_forgery("session-a", "request-1", KEY)
    assert rules.anti_forgery_matches(value, "session-a", "request-1", KEY)
    assert not rules.anti_forgery_matches(value, "session-b", "request-1", KEY)
    assert not rules.anti_forgery_matches(value, "session-a", "request-2", KEY)
    assert not rules.anti_forgery_matches(None, "session-a", "request-1", KEY)
    assert not rules.anti_forgery_matches("", "session-a", "request-1", KEY)


@pytest.mark.parametrize(("infrastructure_url", "prefix", "base"), [
    ("https://galaxy.example.org", "/", "https://galaxy.example.org"),
    ("https://galaxy.example.org/", None, "https://galaxy.example.org"),
    ("https://host.example/galaxy", "/galaxy", "https://host.example/galaxy"),
    ("https://host.example/galaxy/", "/galaxy/", "https://host.example/galaxy"),
    ("http://localhost:8080", "/galaxy", "http://localhost:8080/galaxy"),  # Galaxy's default URL has no path
])
def test_the_public_base_is_galaxys_url_with_its_prefix_once(infrastructure_url, prefix, base):
    assert rules.public_base(infrastructure_url, prefix) == base


@pytest.mark.parametrize(("url", "kind", "where"), [
    ("https://h.example", "oauth-authorization-server", "https://h.example/.well-known/oauth-authorization-server"),
    ("https://h.example/galaxy", "oauth-authorization-server",
     "https://h.example/.well-known/oauth-authorization-server/galaxy"),  # RFC 8414 §3
    ("https://h.example/galaxy/api/mcp", "oauth-protected-resource",
     "https://h.example/.well-known/oauth-protected-resource/galaxy/api/mcp"),  # RFC 9728 §3.1
    ("http://127.0.0.1:8080/api/mcp", "oauth-protected-resource",
     "http://127.0.0.1:8080/.well-known/oauth-protected-resource/api/mcp"),
])
def test_metadata_is_on_the_hosts_root_before_the_path(url, kind, where):
    assert rules.well_known_url(url, kind) == where


def test_a_path_inside_galaxys_prefix_loses_the_prefix_once():
    assert rules.app_relative("/galaxy/mcp-oauth/consent", "/galaxy") == "/mcp-oauth/consent"
    assert rules.app_relative("/mcp-oauth/consent", "") == "/mcp-oauth/consent"
    assert rules.app_relative("/galaxyx/consent", "/galaxy") == "/galaxyx/consent"
