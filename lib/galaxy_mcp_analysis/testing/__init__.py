"""Test support: a launched Galaxy, a sync MCP client, REST set-up helpers, and a Galaxy-driver mixin.

- ``launcher``: ``LaunchedGalaxy`` (the ``make serve`` launcher in its own process group),
  ``serve_directory``, ``HeldFiles``, ``free_port``.
- ``client``: ``McpClient``, a synchronous facade over the official ``mcp`` SDK client.
- ``rest``: ``rest`` and ``create_user`` for set-up through Galaxy's REST API.
- ``driver_mixin``: ``McpAnalysisIntegrationMixin`` for Galaxy's ``IntegrationTestCase``.
- ``postgres``: a throw-away PostgreSQL cluster for the PostgreSQL pass.
- ``memory``: ``PeakRss``, a server process's peak memory growth (tests and ``make bench``).
- ``production``: Galaxy under gravity (gunicorn workers, job handlers, Celery and beat on a
  throw-away Redis) for test_production_deployment.py and ``make serve-production``.
- ``tools_reference``: doc/tools.md from a live ``tools/list`` (``make tools-doc``).
- ``oauth``: the browser's and the client's steps of an OAuth sign-in (test_oauth.py, ``make bench``).

The names below are the public surface tests import from ``galaxy_mcp_analysis.testing``.
"""

from galaxy_mcp_analysis.testing.client import (
    error_text,
    ERROR_TEXTS,
    McpClient,
    McpToolError,
)
from galaxy_mcp_analysis.testing.driver_mixin import McpAnalysisIntegrationMixin
from galaxy_mcp_analysis.testing.launcher import (
    free_port,
    HeldFiles,
    LaunchedGalaxy,
    serve_directory,
    STARTUP_TIMEOUT_SECONDS,
    STOP_TIMEOUT_SECONDS,
)
from galaxy_mcp_analysis.testing.rest import (
    create_user,
    rest,
)

__all__ = [
    "create_user",
    "error_text",
    "ERROR_TEXTS",
    "free_port",
    "HeldFiles",
    "LaunchedGalaxy",
    "McpAnalysisIntegrationMixin",
    "McpClient",
    "McpToolError",
    "rest",
    "serve_directory",
    "STARTUP_TIMEOUT_SECONDS",
    "STOP_TIMEOUT_SECONDS",
]
