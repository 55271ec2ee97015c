"""AnalysisOperationsManager: Galaxy's AgentOperationsManager plus the patch set's operations.

Galaxy's MCP module builds this class for every one of its tools once the
``operations-manager`` patch is applied, so stock tools and ours share one manager
per call. Each method is a thin adapter: Galaxy's managers and services do the
permission checks; the pure logic lives in ``galaxy_mcp_analysis.core``.
"""

from typing import Any

from galaxy.agents.operations import AgentOperationsManager

from galaxy_mcp_analysis import (
    __version__,
    registry,
)
from galaxy_mcp_analysis.jobs import DebuggingJobs
from galaxy_mcp_analysis.making_inputs import MakingInputs
from galaxy_mcp_analysis.pages import NotebookPages
from galaxy_mcp_analysis.reading import ReadingOutputs
from galaxy_mcp_analysis.settings import Settings


class AnalysisOperationsManager(ReadingOutputs, NotebookPages, MakingInputs, DebuggingJobs, AgentOperationsManager):
    #: Set from the environment when the patch is applied.
    settings: Settings = Settings()

    def get_server_info(self) -> dict[str, Any]:
        """Galaxy's server info plus which patch set is active, so agents and admins can tell."""
        info = super().get_server_info()
        activation = registry.current()
        info["patch_set"] = {
            "name": "galaxy-mcp-analysis",
            "version": __version__,
            "patches": list(activation.applied) if activation else [],
        }
        return info
