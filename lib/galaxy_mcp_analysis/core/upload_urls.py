"""The rules of one-time upload URLs (``create_upload_url``): the signed token, its refusals, the curl line.

Pure. The token carries its own claims (history, user, name, type, dbkey, size cap, expiry, nonce), signed
with HMAC-SHA256 under a key derived from Galaxy's ``id_secret``: any web worker can check it without shared
state, and nobody without the secret can make or alter one. Whether a nonce was already used is the one
fact the workers must share; that record lives in Galaxy's database (``uploads.uses``).
"""

import base64
import binascii
import hashlib
import hmac
import json
import secrets
from dataclasses import (
    asdict,
    dataclass,
)

#: Where the route is mounted under Galaxy's public URL; the token follows.
ROUTE_PREFIX = "/api/mcp-upload/"
#: The methods the route takes (the body is the file's raw bytes either way).
METHODS = ("PUT", "POST")
_KEY_LABEL = b"galaxy-mcp-analysis upload url v1"
_NAME_LIMIT = 255


class UploadRefused(Exception):
    """An upload the route refuses: the HTTP status and a message a person or an agent can act on."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class UploadClaims:
    """What one upload URL allows: one file of at most ``max_bytes`` into ``history_id`` as ``user_id``."""

    history_id: str  # encoded
    user_id: str  # encoded
    name: str
    file_type: str
    dbkey: str
    max_bytes: int
    expires_at: int  # Unix seconds
    nonce: str


def signing_key(id_secret: str) -> bytes:
    """The upload URLs' own key, derived from Galaxy's id_secret (never the secret itself)."""
    return hmac.new(id_secret.encode("utf-8"), _KEY_LABEL, hashlib.sha256).digest()


def new_nonce() -> str:
    return secrets.token_hex(16)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def make_token(key: bytes, claims: UploadClaims) -> str:
    body = _b64(json.dumps(asdict(claims), separators=(",", ":"), sort_keys=True).encode("utf-8"))
    return f"{body}.{_b64(hmac.new(key, body.encode('ascii'), hashlib.sha256).digest())}"


_TAMPERED = "This is not a valid upload URL (altered, cut short, or made by another Galaxy)."


def read_token(key: bytes, token: str, now: float) -> UploadClaims:
    """The token's claims if its signature holds and it has not expired; else UploadRefused (403, 410)."""
    body, _, signature = token.partition(".")
    try:
        given = _unb64(signature)
    except (binascii.Error, ValueError):
        raise UploadRefused(403, _TAMPERED + " Ask create_upload_url for a new one.") from None
    expected = hmac.new(key, body.encode("ascii", "replace"), hashlib.sha256).digest()
    if not body or not hmac.compare_digest(given, expected):
        raise UploadRefused(403, _TAMPERED + " Ask create_upload_url for a new one.")
    try:
        claims = UploadClaims(**json.loads(_unb64(body)))
    except (ValueError, TypeError):
        raise UploadRefused(403, _TAMPERED + " Ask create_upload_url for a new one.") from None
    if now >= claims.expires_at:
        raise UploadRefused(410, f"This upload URL expired {int(now - claims.expires_at)} s ago; upload URLs are "
                                 "short-lived. Ask create_upload_url for a new one and upload right away.")
    return claims


def allowed_bytes(requested: int | None, server_cap: int) -> int:
    """The size cap of one URL: the caller's value if given and within the server's, else the server's.
    A value above the server's cap is refused (ValueError naming it), never silently lowered."""
    if requested is None:
        return server_cap
    if requested < 1:
        raise ValueError(f"max_bytes must be at least 1, not {requested}.")
    if requested > server_cap:
        raise ValueError(f"max_bytes={requested} is over this server's upload cap of {server_cap} bytes "
                         f"({format_size(server_cap)}).")
    return requested


def name_problem(name: str) -> str | None:
    if not name.strip():
        return "name is empty; give the dataset's name, e.g. 'reads.fastq.gz'."
    if len(name) > _NAME_LIMIT or any(ord(c) < 32 for c in name):
        return f"name must be one line of at most {_NAME_LIMIT} characters."
    return None


def too_large(size: int, max_bytes: int, used_up: bool) -> UploadRefused:
    """413: over the URL's cap, by its declared Content-Length (``size``; before the URL is used) or mid-stream."""
    declared = f" (Content-Length {size})" if size else ""
    after = ("the URL is used up. Ask create_upload_url for a new one" if used_up else
             "the URL is still unused. Ask create_upload_url for one")
    return UploadRefused(413, f"The upload is over this URL's limit of {max_bytes} bytes ({format_size(max_bytes)})"
                              f"{declared}; nothing was created and {after} with a larger max_bytes (up to the "
                              "server's cap).")


def curl_line(url: str, method: str, headers: dict[str, str]) -> str:
    """The exact command line that uploads ``<file>`` (the path stands there) and prints the JSON answer."""
    assert method == "PUT", "curl -T sends PUT"
    sent = "".join(f" -H '{name}: {value}'" for name, value in headers.items())
    return f"curl --fail-with-body -sS{sent} -T <file> '{url}'"


def format_size(size: int) -> str:
    for unit, step in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= step:
            return f"{size / step:.1f} {unit}"
    return f"{size} B"
