"""AnalysisOperationsManager: Galaxy's AgentOperationsManager plus the patch set's operations.

Galaxy's MCP module builds this class for every one of its tools once the
``operations-manager`` patch is applied, so stock tools and ours share one manager
per call. Each capability is one mixin module beside this one; each method is a thin
adapter: Galaxy's managers and services do the permission checks (an id becomes an object
through ``self.lookup``, the one lookup layer); the pure logic lives in ``galaxy_mcp_analysis.core``.
"""

from typing import Any

from galaxy.agents.operations import AgentOperationsManager

from galaxy_mcp_analysis import __version__
from galaxy_mcp_analysis.core.settings import Settings
from galaxy_mcp_analysis.operations.dynamic_options import DynamicOptions
from galaxy_mcp_analysis.operations.item_updates import ItemUpdates
from galaxy_mcp_analysis.operations.jobs import Jobs
from galaxy_mcp_analysis.operations.lookup import Lookups
from galaxy_mcp_analysis.operations.losses import Losses
from galaxy_mcp_analysis.operations.making_inputs import MakingInputs
from galaxy_mcp_analysis.operations.managing import ManagingRuns
from galaxy_mcp_analysis.operations.pages import NotebookPages
from galaxy_mcp_analysis.operations.reading import ReadingOutputs
from galaxy_mcp_analysis.operations.result_ids import ResultIds
from galaxy_mcp_analysis.operations.tool_information import ToolInformation
from galaxy_mcp_analysis.operations.tool_inputs import ToolInputs
from galaxy_mcp_analysis.operations.tool_runs import ToolRuns
from galaxy_mcp_analysis.operations.table_headers import TableHeaders
from galaxy_mcp_analysis.operations.workflows import Workflows


class AnalysisOperationsManager(
    ResultIds,
    ReadingOutputs,
    NotebookPages,
    MakingInputs,
    TableHeaders,
    ToolRuns,
    Jobs,
    ToolInputs,
    DynamicOptions,
    ToolInformation,
    ManagingRuns,
    ItemUpdates,
    Workflows,
    Losses,
    Lookups,
    AgentOperationsManager,
):
    #: Set from the environment when the patch is applied.
    settings: Settings = Settings()
    #: Ids of the patches activation applied in this process (set by galaxy_mcp_analysis.activation).
    active_patches: tuple[str, ...] = ()

    def get_server_info(self) -> dict[str, Any]:
        """Galaxy's server info plus which patch set is active, so agents and admins can tell."""
        info = super().get_server_info()
        info["patch_set"] = {
            "name": "galaxy-mcp-analysis",
            "version": __version__,
            "patches": list(self.active_patches),
        }
        return info
