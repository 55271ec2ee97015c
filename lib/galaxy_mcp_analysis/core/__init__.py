"""Pure logic of the patch set: no Galaxy imports, testable on its own.

Each module here is the core of one capability (or a shared vocabulary: ``errors``,
``settings``, ``storable``); the Galaxy adapters in ``galaxy_mcp_analysis.operations``
and the MCP declarations in ``galaxy_mcp_analysis.tools`` stay thin around them.
"""

from galaxy_mcp_analysis.core.errors import InvalidInput

__all__ = ["InvalidInput"]
