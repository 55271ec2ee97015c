"""Patches of how failures reach the agent and the admin: coded tool errors, plain log records,
and an agent's mistakes as one warning line.
"""

import logging

from galaxy_mcp_analysis.activation.built_server import (
    add_server_customizer,
    check_mcp_tools,
)
from galaxy_mcp_analysis.core.settings import Settings


def check_coded_errors() -> str | None:
    from fastmcp.server.middleware import Middleware
    from galaxy import exceptions
    from galaxy.webapps.galaxy.api import mcp as galaxy_mcp

    handler = getattr(galaxy_mcp, "_mcp_error_handler", None)
    if handler is None:
        return "galaxy.webapps.galaxy.api.mcp._mcp_error_handler is gone"
    # Stock tools must keep the original Galaxy exception reachable (raise ... from e),
    # since its class decides the code.
    from galaxy_mcp_analysis.mcp.errors import exception_chain

    original = exceptions.ObjectNotFound("self-check")
    galaxy_log = logging.getLogger(galaxy_mcp.__name__)
    disabled, galaxy_log.disabled = galaxy_log.disabled, True  # the handler logs what it catches
    try:
        with handler("self-check"):
            raise original
    except Exception as raised:
        if original not in exception_chain(raised):
            return "_mcp_error_handler no longer keeps the original exception as the cause"
    else:
        return "_mcp_error_handler no longer re-raises"
    finally:
        galaxy_log.disabled = disabled
    if not hasattr(Middleware, "on_call_tool"):
        return "fastmcp Middleware.on_call_tool is gone"
    import fastmcp.server.server as fastmcp_server

    for module, name in zip((fastmcp_server, galaxy_mcp), TOOL_FAILURE_LOGGERS):
        if getattr(getattr(module, "logger", None), "name", None) != name:
            return f"{module.__name__} no longer reports failed tool calls on the logger {name!r}"
    return check_mcp_tools()


#: The loggers that report a failed tools/call: FastMCP's server, and Galaxy's stock tools' handler.
TOOL_FAILURE_LOGGERS = ("fastmcp.server.server", "galaxy.webapps.galaxy.api.mcp")


def apply_coded_errors(settings: Settings) -> None:
    from galaxy_mcp_analysis.mcp.errors import (
        CallersMistakesAsWarnings,
        CodedToolErrors,
    )
    from galaxy_mcp_analysis.mcp.stack import place

    for name in TOOL_FAILURE_LOGGERS:  # an agent's mistake is not the admin's error: one warning line, no traceback
        logger = logging.getLogger(name)
        if not any(isinstance(existing, CallersMistakesAsWarnings) for existing in logger.filters):
            logger.addFilter(CallersMistakesAsWarnings())
    add_server_customizer(lambda mcp, gx_app: place(mcp, CodedToolErrors()))


def check_plain_logging() -> str | None:
    import fastmcp

    if not hasattr(fastmcp.settings, "enable_rich_logging"):
        return "fastmcp.settings.enable_rich_logging is gone"
    if not logging.getLogger("fastmcp").handlers and not logging.getLogger("fastmcp").propagate:
        return "fastmcp's logger has neither handlers nor propagation; its records would be lost"
    return None


def apply_plain_logging(settings: Settings) -> None:
    import fastmcp

    # FastMCP logs a failing tool's exception through rich's handler on the event loop, and
    # rich highlights the message in time quadratic in its length: one error echoing a 2 MiB
    # argument stopped the whole server (not even /api/version answered) for over ten minutes.
    # Its records go to Galaxy's own log handlers instead, like every other library's.
    fastmcp.settings.enable_rich_logging = False
    fastmcp_log = logging.getLogger("fastmcp")
    for handler in list(fastmcp_log.handlers):
        fastmcp_log.removeHandler(handler)
    fastmcp_log.propagate = True
