"""Galaxy adapters: the operations manager and one mixin per capability.

Each module is a thin adapter between one capability's pure core (``galaxy_mcp_analysis.core``)
and Galaxy's own managers and services, which keep permissions, quotas and validation
Galaxy's. ``manager.AnalysisOperationsManager`` mixes them into Galaxy's AgentOperationsManager.
Nothing here imports the MCP layer above.
"""

from galaxy_mcp_analysis.operations.manager import AnalysisOperationsManager

__all__ = ["AnalysisOperationsManager"]
