"""The rules of one-time upload URLs (core.upload_urls): signature, expiry, size cap, the curl line."""

import dataclasses

import pytest

from galaxy_mcp_analysis.core.upload_urls import (
    allowed_bytes,
    curl_line,
    make_token,
    name_problem,
    read_token,
    signing_key,
    too_large,
    UploadClaims,
    UploadRefused,
)

KEY = signing_key("a" * 32)
CLAIMS = UploadClaims("f2db41e1fa331b3e", "1cd8e2f6b131e891", "reads.bam", "auto", "?", 1000, 2_000, "n" * 32)


def test_a_token_reads_back_its_claims_until_it_expires():
    token = make_token(KEY, CLAIMS)
    assert read_token(KEY, token, 1_999.5) == CLAIMS
    with pytest.raises(UploadRefused) as expired:
        read_token(KEY, token, 2_030)
    assert expired.value.status == 410 and "expired 30 s ago" in expired.value.message


def test_the_key_is_derived_and_differs_by_secret():
    assert KEY != signing_key("b" * 32) and KEY != b"a" * 32 and len(KEY) == 32


@pytest.mark.parametrize("change", ["history_id", "user_id", "max_bytes", "expires_at", "name"])
def test_changing_any_claim_breaks_the_signature(change):
    body, _, signature = make_token(KEY, CLAIMS).partition(".")
    value = {"max_bytes": 10**12, "expires_at": 10**10}.get(change, "other")
    forged_body, _, _ = make_token(KEY, dataclasses.replace(CLAIMS, **{change: value})).partition(".")
    with pytest.raises(UploadRefused) as refused:
        read_token(KEY, f"{forged_body}.{signature}", 1_000)
    assert refused.value.status == 403 and "not a valid upload URL" in refused.value.message


@pytest.mark.parametrize("token", ["", ".", "abc", "abc.def", "abc.!!!", "%%%.%%%"])
def test_garbage_is_refused_as_invalid(token):
    with pytest.raises(UploadRefused) as refused:
        read_token(KEY, token, 1_000)
    assert refused.value.status == 403


def test_another_galaxys_token_is_refused():
    with pytest.raises(UploadRefused):
        read_token(signing_key("other"), make_token(KEY, CLAIMS), 1_000)


def test_the_size_cap_is_the_callers_within_the_servers():
    assert allowed_bytes(None, 500) == 500
    assert allowed_bytes(100, 500) == 100
    with pytest.raises(ValueError, match="over this server's upload cap of 500 bytes"):
        allowed_bytes(501, 500)
    with pytest.raises(ValueError, match="at least 1"):
        allowed_bytes(0, 500)


def test_over_the_cap_says_whether_the_url_is_used_up():
    assert "still unused" in too_large(2000, 1000, used_up=False).message
    assert "used up" in too_large(0, 1000, used_up=True).message
    assert too_large(0, 1000, used_up=True).status == 413


def test_names():
    assert name_problem("reads.bam") is None
    assert name_problem(" ") and name_problem("a\nb") and name_problem("x" * 256)


def test_the_curl_line_puts_the_file_and_headers():
    line = curl_line("https://g/api/mcp-upload/t.s", "PUT", {"Content-Type": "application/octet-stream"})
    assert line == ("curl --fail-with-body -sS -H 'Content-Type: application/octet-stream' -T <file> "
                    "'https://g/api/mcp-upload/t.s'")
