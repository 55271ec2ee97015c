"""Client ID Metadata Documents (the MCP 2026-07-28 sign-in): a ``client_id`` that is the URL of the
client's own metadata, which the authorization server fetches instead of a registration. The rules
the server holds such a URL, the address it resolves to and the document to, without any network:
``galaxy_mcp_analysis.oauth.client_documents`` fetches.

A forged URL must not make Galaxy reach inside its own network (SSRF): https only, and an address
that is public (``ipaddress``'s ``is_global``) for every address the name resolves to; no redirect is
followed. Development (``GALAXY_MCP_ANALYSIS_OAUTH_DEVELOPMENT``, make serve's and the tests') also
allows http and https to a loopback host, for a document served on the developer's own machine.
"""

import hashlib
import ipaddress
import re
from urllib.parse import (
    SplitResult,
    urlsplit,
)

from galaxy_mcp_analysis.core.oauth import (
    check_client_metadata,
    is_loopback,
    MAX_URI_LENGTH,
    metadata_object,
    OAuthRuleError,
)

#: A document larger than this is refused unread past it (the same cap as a registration request).
MAX_DOCUMENT_BYTES = 16 * 1024
#: The whole fetch (name resolution, connection, body) must end within this many seconds.
FETCH_SECONDS = 5.0
#: A fetched document is reused for its HTTP cache lifetime (``Cache-Control: max-age``), kept within these
#: bounds: at least a minute, so a burst of sign-ins (and a client that says ``no-store``) costs one fetch,
#: and at most a day, so a changed document is seen; a document without a lifetime is kept ten minutes.
CACHE_MIN_SECONDS = 60
CACHE_MAX_SECONDS = 24 * 3600
CACHE_DEFAULT_SECONDS = 600
#: How many documents one process keeps (the oldest go first).
CACHE_ENTRIES = 1000
#: The stored key of a document's client (its URL may be longer than the 64-character column).
STORED_KEY_PREFIX = "cimd_"

#: What a metadata document must never carry: a public document cannot keep a shared secret.
_SECRET_FIELDS = ("client_secret", "client_secret_expires_at")
_MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*\"?(\d+)\"?\s*(?:,|$)", re.IGNORECASE)


def is_document_client_id(client_id: str | None) -> bool:
    """A client id that names a metadata document (dynamic registration issues ids that are no URLs)."""
    return bool(client_id) and client_id.startswith(("https://", "http://"))


def stored_client_id(client_id: str) -> str:
    """The key a client's rows are stored under: a registered client's own id; for a document's URL, a
    fixed-length digest of it (the URL itself is kept in the client's stored information)."""
    if not is_document_client_id(client_id):
        return client_id
    return STORED_KEY_PREFIX + hashlib.sha256(client_id.encode()).hexdigest()[:48]


def _refused(url: str, why: str) -> OAuthRuleError:
    return OAuthRuleError("invalid_client", f"The client metadata document {url[:200]!r} is refused: {why}")


def check_document_url(url: str, development: bool = False) -> SplitResult:
    """A ``client_id`` URL the server may fetch: https with a path, no fragment, user information or dot
    segments; http only to a loopback host, and only in development."""
    if len(url) > MAX_URI_LENGTH:
        raise _refused(url, f"a client_id URL has at most {MAX_URI_LENGTH} characters.")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (a malformed port raises here)
    except ValueError:
        raise _refused(url, "it is not a URL.") from None
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise _refused(url, "a client_id URL must be https with a host.")
    if parts.scheme == "http" and not (development and is_loopback(parts.hostname)):
        raise _refused(url, "a client_id URL must be https (http only to a loopback host, in development).")
    if parts.fragment or "#" in url or parts.username or parts.password:
        raise _refused(url, "a client_id URL must have no fragment and no user information.")
    segments = parts.path.split("/")
    if parts.path in ("", "/") or "." in segments or ".." in segments:
        raise _refused(url, "a client_id URL must have a path, without '.' or '..' segments.")
    return parts


def check_address(address: str, development: bool = False) -> None:
    """An address a document may be fetched from: public; in development also loopback."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        raise OAuthRuleError("invalid_client", f"{address[:100]!r} is not an IP address.") from None
    if ip.version == 6 and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_global and not ip.is_multicast:
        return
    if development and ip.is_loopback:
        return
    raise OAuthRuleError(
        "invalid_client",
        f"The client metadata document's host resolves to {ip}, a private, loopback or reserved address; "
        "Galaxy fetches client metadata from public addresses only.")


def check_document(url: str, body: bytes) -> dict:
    """The fetched document as a public client's metadata: a JSON object within MAX_DOCUMENT_BYTES whose
    ``client_id`` is exactly ``url``, with no secret, held to the registration rules (redirect URIs by
    ``application_type``, name, ``token_endpoint_auth_method: none``, scopes)."""
    if len(body) > MAX_DOCUMENT_BYTES:
        raise _refused(url, f"it is over {MAX_DOCUMENT_BYTES} bytes.")
    metadata = metadata_object(body, "The client metadata document")
    if metadata.get("client_id") != url:
        raise _refused(url, f"its client_id {str(metadata.get('client_id'))[:200]!r} is not the URL it is served at.")
    if any(name in metadata for name in _SECRET_FIELDS):
        raise _refused(url, "a metadata document must not carry a client secret.")
    return check_client_metadata(metadata)


def cache_seconds(cache_control: str | None) -> int:
    """How long a fetched document is reused: its ``max-age`` (``no-store``/``no-cache`` as 0), kept within
    CACHE_MIN_SECONDS and CACHE_MAX_SECONDS; CACHE_DEFAULT_SECONDS when the response gives no lifetime."""
    value = cache_control or ""
    if re.search(r"(?:^|,)\s*(?:no-store|no-cache)\s*(?:,|$)", value, re.IGNORECASE):
        seconds = 0
    elif match := _MAX_AGE.search(value):
        seconds = int(match.group(1))
    else:
        seconds = CACHE_DEFAULT_SECONDS
    return max(CACHE_MIN_SECONDS, min(CACHE_MAX_SECONDS, seconds))
