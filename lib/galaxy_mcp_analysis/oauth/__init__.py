"""OAuth 2.1 sign-in for /api/mcp on Galaxy's own login (off unless the admin switches it on).

``caller`` (who a verified access token speaks for in this request; the bearer gate),
``provider`` (Galaxy as the authorization server, the MCP SDK's provider protocol),
``storage`` (the patch set's tables in Galaxy's database), ``routes`` (metadata and endpoints),
``pages`` (consent and connected clients), ``scopes`` (what galaxy:read and galaxy:write reach),
``admin`` (the ``galaxy-mcp-analysis oauth`` command). The rules are in ``core.oauth``.
"""
