"""The rules of OAuth 2.1 sign-in for /api/mcp, without Galaxy: what the authorization server accepts.

PKCE (RFC 7636, ``S256`` only), redirect URIs (RFC 8252/OAuth 2.1: https, or http on a loopback
address; exact match; a ``web`` client's https on a public host), client registration (RFC 7591: sizes
and shapes; core.client_documents holds a client metadata document to the same), scopes (``galaxy:read``
reaches the tools annotated read-only, ``galaxy:write`` every tool), tokens (random, sent once,
stored as their SHA-256), the refresh token's rotation with reuse detection, and the signed values
the consent step carries (the pending authorization request, the anti-forgery value bound to the
Galaxy session). ``galaxy_mcp_analysis.oauth`` applies them on Galaxy's database and routes.
"""

import base64
import hashlib
import hmac
import ipaddress
import json
import re
import secrets
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

READ_SCOPE = "galaxy:read"
WRITE_SCOPE = "galaxy:write"
SCOPES = (READ_SCOPE, WRITE_SCOPE)

#: Every token this server issues starts with its kind's prefix, so a bearer value is told from an API key.
ACCESS_PREFIX = "gxmcp_at_"
REFRESH_PREFIX = "gxmcp_rt_"
CODE_PREFIX = "gxmcp_code_"
TOKEN_PREFIXES = (ACCESS_PREFIX, REFRESH_PREFIX, CODE_PREFIX)

#: Rows that expired less than this long ago are not purged yet: a request that checked a code or token
#: just before its expiry may still be marking it used or issuing under its grant.
PURGE_GRACE_SECONDS = 60
#: The token endpoint purges at most once per this many seconds per process (oauth.provider).
PURGE_EVERY_SECONDS = 600

#: Registration limits (RFC 7591 sets none; these keep one request from filling the database).
MAX_REGISTRATION_BYTES = 16 * 1024
MAX_REDIRECT_URIS = 10
MAX_URI_LENGTH = 2000
MAX_CLIENT_NAME = 200

_PKCE_VALUE = re.compile(r"^[A-Za-z0-9._~-]{43,128}$")
_CHALLENGE = re.compile(r"^[A-Za-z0-9_-]{43}$")  # base64url of a SHA-256 digest, unpadded


class OAuthRuleError(ValueError):
    """A request an OAuth endpoint refuses: ``error`` is the RFC 6749 / 7591 code, the message its description."""

    def __init__(self, error: str, description: str):
        super().__init__(description)
        self.error = error
        self.description = description


# --- PKCE ---------------------------------------------------------------------------------------


def check_challenge(method: str | None, challenge: str | None) -> None:
    """The authorization request's PKCE: a ``code_challenge`` with the method named and ``S256``."""
    if not challenge:
        raise OAuthRuleError("invalid_request", "code_challenge is required (PKCE with S256).")
    if method != "S256":
        named = "missing" if method is None else f"'{method}'"
        raise OAuthRuleError(
            "invalid_request", f"code_challenge_method is {named}; only S256 is accepted (plain is not)."
        )
    if not _CHALLENGE.match(challenge):
        raise OAuthRuleError("invalid_request", "code_challenge must be the 43-character base64url SHA-256 of the verifier.")


def s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")


def verifier_matches(verifier: str, challenge: str) -> bool:
    return bool(_PKCE_VALUE.match(verifier or "")) and hmac.compare_digest(s256(verifier), challenge)


# --- Where the server is: Galaxy's public URL, with or without a path prefix ----------------------


def public_base(infrastructure_url: str, url_prefix: str | None = "/") -> str:
    """Galaxy's public URL, the issuer: ``galaxy_infrastructure_url``, with ``galaxy_url_prefix`` appended
    when that URL does not end with it already (Galaxy's default URL, ``http://localhost:8080``, has none)."""
    base = infrastructure_url.rstrip("/")
    prefix = (url_prefix or "").strip("/")
    if prefix and not urlsplit(base).path.rstrip("/").endswith("/" + prefix):
        base += "/" + prefix
    return base


def well_known_url(url: str, kind: str) -> str:
    """Where the metadata of ``url`` (an issuer, RFC 8414 §3; a resource, RFC 9728 §3.1) is: on the host's
    root, ``/.well-known/<kind>`` inserted before ``url``'s path (``https://h/galaxy`` ->
    ``https://h/.well-known/oauth-authorization-server/galaxy``)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}/.well-known/{kind}{parts.path.rstrip('/')}"


def app_relative(path: str, root_path: str) -> str:
    """A request path without the prefix Galaxy is mounted under (Galaxy's login page adds it back)."""
    root = root_path.rstrip("/")
    return (path[len(root):] or "/") if root and path.startswith(root + "/") else path


# --- Redirect URIs and registration ---------------------------------------------------------------


def is_loopback(host: str | None) -> bool:
    if not host:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


#: OpenID Connect Registration's ``application_type``: a hosted client (``web``) or an app on the person's
#: device (``native``); the MCP 2026-07-28 sign-in asks clients to send it.
APPLICATION_TYPES = ("web", "native")


def check_application_type(value: object) -> str | None:
    """``application_type`` as registered or in a client's metadata document: absent, ``web`` or ``native``."""
    if value is None or value in APPLICATION_TYPES:
        return value
    raise OAuthRuleError(
        "invalid_client_metadata",
        f"application_type {str(value)[:50]!r} is not one of web, native: 'native' for an app on the person's device "
        "(loopback redirects), 'web' for a hosted client (https redirects).")


def check_redirect_uri(uri: object, application_type: str | None = None) -> str:
    """A redirect URI a client may register: absolute https, or http to a loopback host; no fragment.
    A ``web`` client's must be https on a host that is not loopback (OpenID Connect Registration §2); a
    ``native`` client's, or one of a client that names no type (older clients), either form."""
    if not isinstance(uri, str) or not uri or len(uri) > MAX_URI_LENGTH:
        raise OAuthRuleError("invalid_redirect_uri", f"A redirect URI must be a string of 1 to {MAX_URI_LENGTH} characters.")
    try:
        parts = urlsplit(uri)
        host = parts.hostname
    except ValueError:
        raise OAuthRuleError("invalid_redirect_uri", f"Redirect URI {uri[:100]!r} is not a URL.") from None
    if parts.fragment or "#" in uri:
        raise OAuthRuleError("invalid_redirect_uri", "A redirect URI must not have a fragment.")
    if parts.username or parts.password:
        raise OAuthRuleError("invalid_redirect_uri", "A redirect URI must not carry user information.")
    if application_type == "web":
        if parts.scheme == "https" and host and not is_loopback(host):
            return uri
        raise OAuthRuleError(
            "invalid_redirect_uri",
            f"Redirect URI {uri[:100]!r} is refused for a web client: it must be https on a host that is not "
            "loopback (an app on the person's device registers as application_type native).")
    if parts.scheme == "https" and host:
        return uri
    if parts.scheme == "http" and is_loopback(host):
        return uri
    raise OAuthRuleError(
        "invalid_redirect_uri",
        f"Redirect URI {uri[:100]!r} is refused: only https URLs, or http to localhost/127.0.0.1/[::1], are allowed.",
    )


def check_registration(body: bytes) -> dict:
    """The registration request's JSON object, after the size, shape and redirect-URI rules (RFC 7591 codes)."""
    if len(body) > MAX_REGISTRATION_BYTES:
        raise OAuthRuleError("invalid_client_metadata", f"The registration request is over {MAX_REGISTRATION_BYTES} bytes.")
    return check_client_metadata(metadata_object(body, "The registration request"))


def metadata_object(body: bytes, what: str) -> dict:
    try:
        metadata = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        metadata = None
    if not isinstance(metadata, dict):
        raise OAuthRuleError("invalid_client_metadata", f"{what} is not a JSON object.")
    return metadata


def check_client_metadata(metadata: dict) -> dict:
    """A client's metadata (a registration request's, or a metadata document's): application type, redirect
    URIs, name, a public client's authentication, scopes (RFC 7591 codes). Returns it as a public client's."""
    application_type = check_application_type(metadata.get("application_type"))
    uris = metadata.get("redirect_uris")
    if not isinstance(uris, list) or not uris:
        raise OAuthRuleError("invalid_redirect_uri", "redirect_uris must be a non-empty list.")
    if len(uris) > MAX_REDIRECT_URIS:
        raise OAuthRuleError("invalid_redirect_uri", f"At most {MAX_REDIRECT_URIS} redirect_uris may be registered.")
    for uri in uris:
        check_redirect_uri(uri, application_type)
    name = metadata.get("client_name")
    if name is not None and (not isinstance(name, str) or len(name) > MAX_CLIENT_NAME):
        raise OAuthRuleError("invalid_client_metadata", f"client_name must be a string of at most {MAX_CLIENT_NAME} characters.")
    method = metadata.get("token_endpoint_auth_method", "none")
    if method != "none":
        raise OAuthRuleError(
            "invalid_client_metadata",
            f"token_endpoint_auth_method {method!r} is not supported: register a public client ('none'); PKCE protects the code.",
        )
    scope = metadata.get("scope")
    if scope is not None:
        check_scopes(scope, error="invalid_client_metadata")
    return {**metadata, "token_endpoint_auth_method": "none"}


# --- Scopes ---------------------------------------------------------------------------------------


def check_scopes(scope: object, error: str = "invalid_scope") -> list[str]:
    if not isinstance(scope, str) or not scope.split():
        raise OAuthRuleError(error, f"scope must be a space-separated list of {', '.join(SCOPES)}.")
    unknown = [name for name in scope.split() if name not in SCOPES]
    if unknown:
        raise OAuthRuleError(error, f"Unknown scope {', '.join(unknown)}; the scopes are {', '.join(SCOPES)}.")
    return sorted(set(scope.split()), key=SCOPES.index)


def needed_scope(read_only: bool) -> str:
    """The scope a tool needs: ``galaxy:read`` for the tools annotated read-only, else ``galaxy:write``."""
    return READ_SCOPE if read_only else WRITE_SCOPE


def allows(scopes: list[str] | tuple[str, ...], read_only: bool) -> bool:
    """``galaxy:write`` reaches every tool; ``galaxy:read`` only the read-only ones."""
    return WRITE_SCOPE in scopes or (read_only and READ_SCOPE in scopes)


# --- Tokens ---------------------------------------------------------------------------------------


def new_token(prefix: str) -> str:
    """A random token (256 bits) with its kind's prefix; only its hash is ever stored."""
    return prefix + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def is_oauth_token(value: str | None) -> bool:
    return bool(value) and value.startswith(TOKEN_PREFIXES)


def expired(expires_at: float | None, now: float | None = None) -> bool:
    return expires_at is not None and expires_at <= (time.time() if now is None else now)


@dataclass(frozen=True)
class RefreshVerdict:
    """What presenting a refresh token leads to: ``rotate`` (issue a new pair), or refuse, and whether
    the whole grant is revoked (a token already rotated away is being reused: someone holds a copy)."""

    rotate: bool
    revoke_grant: bool
    reason: str


def refresh_verdict(*, used: bool, revoked: bool, grant_revoked: bool, expires_at: float | None,
                    now: float | None = None) -> RefreshVerdict:
    if grant_revoked or revoked:
        return RefreshVerdict(False, False, "the grant was revoked")
    if used:
        return RefreshVerdict(False, True, "the refresh token was already used; the grant is revoked")
    if expired(expires_at, now):
        return RefreshVerdict(False, False, "the refresh token has expired")
    return RefreshVerdict(True, False, "")


# --- Signed values of the consent step ------------------------------------------------------------


def sign(payload: dict, key: bytes) -> str:
    body = base64.urlsafe_b64encode(json.dumps(payload, sort_keys=True).encode()).decode().rstrip("=")
    mac = hmac.new(key, body.encode(), hashlib.sha256).hexdigest()
    return f"{body}.{mac}"


def unsign(value: str, key: bytes, now: float | None = None) -> dict:
    """The payload of a value ``sign`` made with ``key``, unchanged and unexpired (``exp``), else OAuthRuleError."""
    body, _, mac = (value or "").partition(".")
    expected = hmac.new(key, body.encode(), hashlib.sha256).hexdigest()
    if not body or not hmac.compare_digest(mac, expected):
        raise OAuthRuleError("invalid_request", "The authorization request was altered or is not this server's.")
    payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    if expired(payload.get("exp"), now):
        raise OAuthRuleError("invalid_request", "The authorization request expired; start the sign-in again.")
    return payload


def anti_forgery(session_key: str, request_value: str, key: bytes) -> str:
    """The consent form's hidden value: bound to the Galaxy session and to the one request it approves."""
    return hmac.new(key, f"consent|{session_key}|{request_value}".encode(), hashlib.sha256).hexdigest()


def anti_forgery_matches(given: str | None, session_key: str, request_value: str, key: bytes) -> bool:
    return bool(given) and hmac.compare_digest(given, anti_forgery(session_key, request_value, key))
