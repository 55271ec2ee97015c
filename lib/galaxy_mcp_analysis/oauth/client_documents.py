"""Fetching a client's metadata document (a ``client_id`` that is its URL), by core.client_documents' rules.

The name is resolved here and every address it resolves to is checked before any connection; the
request then goes to a checked address (the URL's host kept for TLS and ``Host``), so a name that
resolves differently a moment later (DNS rebinding) cannot lead the fetch elsewhere. No redirect is
followed, no proxy or netrc of the environment is used (``SSL_CERT_FILE`` is: a site's own CA), the
body is read up to its cap only and the whole fetch has one time limit. A document is kept per
process for its bounded HTTP cache lifetime; the client's row (name, the document as its stored
information) is written when it is fetched, so grants, the connections page and ``oauth list`` name it.
"""

import logging
import socket
import time
from collections import OrderedDict
from urllib.parse import urlsplit

import anyio
import httpx
from mcp.shared.auth import OAuthClientInformationFull

from galaxy_mcp_analysis.core import client_documents as rules
from galaxy_mcp_analysis.core.oauth import (
    OAuthRuleError,
    SCOPES,
)

log = logging.getLogger(__name__)


class ClientDocuments:
    """The clients known by their metadata document's URL; ``client(url)`` or OAuthRuleError saying why not."""

    def __init__(self, store, development: bool = False):
        self.store = store
        self.development = development
        self._kept: OrderedDict[str, tuple[float, OAuthClientInformationFull]] = OrderedDict()
        self._tls = httpx.create_ssl_context(trust_env=True)  # certifi, or SSL_CERT_FILE/SSL_CERT_DIR

    async def client(self, url: str) -> OAuthClientInformationFull:
        kept = self._kept.get(url)
        if kept is not None and kept[0] > time.monotonic():
            return kept[1]
        metadata, lifetime = await self.fetch(url)
        # A document naming no scope may ask for every scope, as a registration naming none is given them.
        info = OAuthClientInformationFull.model_validate({"scope": " ".join(SCOPES), **metadata, "client_id": url})
        await anyio.to_thread.run_sync(self.store.put_client, url, info.client_name,
                                       info.model_dump_json(exclude_none=True))
        self._kept[url] = (time.monotonic() + lifetime, info)
        self._kept.move_to_end(url)
        while len(self._kept) > rules.CACHE_ENTRIES:
            self._kept.popitem(last=False)
        return info

    async def fetch(self, url: str) -> tuple[dict, int]:
        """The checked document at ``url`` and how many seconds it may be reused."""
        parts = rules.check_document_url(url, self.development)
        try:
            with anyio.fail_after(rules.FETCH_SECONDS):
                addresses = await self._addresses(parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))
                response, body = await self._get(url, addresses)
        except TimeoutError:
            raise OAuthRuleError("invalid_client", f"The client metadata document {url[:200]!r} did not arrive "
                                                   f"within {rules.FETCH_SECONDS:g} s.") from None
        except (httpx.HTTPError, OSError) as error:
            log.info("galaxy-mcp-analysis: fetching the client metadata document %s failed: %s", url[:200], error)
            raise OAuthRuleError("invalid_client", f"The client metadata document {url[:200]!r} could not be "
                                                   f"fetched ({type(error).__name__}).") from None
        if response.status_code != 200:
            why = "redirects are not followed" if response.is_redirect else f"HTTP {response.status_code}"
            raise OAuthRuleError("invalid_client", f"The client metadata document {url[:200]!r} was not served "
                                                   f"({why}); it must be answered with 200 at that URL.")
        return rules.check_document(url, body), rules.cache_seconds(response.headers.get("cache-control"))

    async def _addresses(self, host: str, port: int) -> list[tuple[str, int]]:
        """Every address ``host`` resolves to, each checked (one refused address refuses the name)."""
        found = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        addresses = list(dict.fromkeys((info[4][0], port) for info in found))
        for address, _ in addresses:
            rules.check_address(address, self.development)
        return addresses

    async def _get(self, url: str, addresses) -> tuple[httpx.Response, bytes]:
        parts = urlsplit(url)
        last_error: Exception | None = None
        async with httpx.AsyncClient(verify=self._tls, trust_env=False, follow_redirects=False,
                                     timeout=rules.FETCH_SECONDS) as http:
            for address, port in addresses:
                host = f"[{address}]" if ":" in address else address
                pinned = parts._replace(netloc=f"{host}:{port}").geturl()
                extensions = {"sni_hostname": parts.hostname} if parts.scheme == "https" else {}
                try:
                    async with http.stream("GET", pinned, extensions=extensions, headers={
                            "host": parts.netloc, "accept": "application/json",
                            "accept-encoding": "identity"}) as response:
                        return response, await _capped_body(response, url)
                except httpx.ConnectError as error:  # the next address of the name
                    last_error = error
        raise last_error or OSError("no address")


async def _capped_body(response: httpx.Response, url: str) -> bytes:
    """The body as sent, up to the cap (never decompressed: a small compressed body could unpack to any size)."""
    if response.headers.get("content-encoding", "identity").lower() != "identity":
        raise OAuthRuleError("invalid_client", f"The client metadata document {url[:200]!r} came compressed; "
                                               "it must be served as plain JSON.")
    body = bytearray()
    async for chunk in response.aiter_raw():
        body += chunk
        if len(body) > rules.MAX_DOCUMENT_BYTES:
            raise OAuthRuleError("invalid_client", f"The client metadata document {url[:200]!r} is over "
                                                   f"{rules.MAX_DOCUMENT_BYTES} bytes.")
    return bytes(body)
