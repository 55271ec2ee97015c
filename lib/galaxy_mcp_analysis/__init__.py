"""galaxy-mcp-analysis: lets an agent drive a Galaxy 26.1 analysis through ``/api/mcp``.

Switched on by running Galaxy through :mod:`galaxy_mcp_analysis.fast_factory`
(uvicorn) or :mod:`galaxy_mcp_analysis.worker` (gunicorn, as gravity runs it).
See PATCHES.md for every runtime patch the package applies.
"""

__version__ = "0.1.0"
