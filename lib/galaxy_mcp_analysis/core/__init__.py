"""Pure logic of the patch set: no Galaxy imports, testable on its own.

Each module here is the core of one capability; the Galaxy adapters in
``galaxy_mcp_analysis.operations`` and the MCP registrations in
``galaxy_mcp_analysis.mcp_tools`` stay thin around them.
"""


class InvalidInput(ValueError):
    """An argument an agent can fix; the error mapping reports it as [VALIDATION_ERROR]."""
