"""A mixin for Galaxy's own integration tests (``IntegrationTestCase``): /api/mcp with the patch set on."""

import tempfile
from pathlib import Path

from galaxy_mcp_analysis.testing.client import McpClient


class McpAnalysisIntegrationMixin:
    """Mix into a ``galaxy_test.driver.integration_util.IntegrationTestCase`` subclass.

    The class's in-process Galaxy then serves /api/mcp with the patch set on, and
    ``self.mcp_client()`` talks to it as the test's default user. Place the mixin
    *before* IntegrationTestCase in the bases. Paths the driver would take from a
    Galaxy source checkout are pointed at files written here, so the driver works
    with Galaxy installed from PyPI.
    """

    _mcp_config_dir: str

    @classmethod
    def setUpClass(cls):
        from galaxy_mcp_analysis.activation import activate
        from galaxy_mcp_analysis.serve import galaxy_config

        cls._mcp_config_dir = tempfile.mkdtemp(prefix="mcp-analysis-it-")
        tool_conf = Path(cls._mcp_config_dir, "tool_conf.xml")
        tool_conf.write_text(galaxy_config.toolbox_xml())
        Path(cls._mcp_config_dir, "tool_data_table_conf.xml").write_text("<tables></tables>\n")
        cls.default_tool_conf = str(tool_conf)
        activate()  # before the driver builds Galaxy in this process
        super().setUpClass()

    @classmethod
    def handle_galaxy_config_kwds(cls, config):
        super().handle_galaxy_config_kwds(config)
        config["enable_mcp_server"] = True
        config["mcp_server_path"] = "/api/mcp"
        config["tool_data_table_config_path"] = str(Path(cls._mcp_config_dir, "tool_data_table_conf.xml"))
        config["data_manager_config_file"] = None
        config["involucro_auto_init"] = False  # it would download a binary: no network here

    def setUp(self):
        from galaxy_test.base.populators import DatasetPopulator

        super().setUp()
        self.dataset_populator = DatasetPopulator(self.galaxy_interactor)

    def mcp_client(self, **headers) -> McpClient:
        return McpClient(self.url.rstrip("/") + "/api/mcp", headers=headers or None)

    @property
    def mcp_api_key(self) -> str:
        return self.galaxy_interactor.api_key
