"""The patch set inside Galaxy's own integration-test driver (galaxy_test.driver)."""

from galaxy_test.driver.integration_util import IntegrationTestCase

from galaxy_mcp_analysis.testing import McpAnalysisIntegrationMixin


class TestPatchSetUnderGalaxysDriver(McpAnalysisIntegrationMixin, IntegrationTestCase):
    def test_new_tools_serve_galaxys_test_user(self):
        history_id = self.dataset_populator.new_history()
        dataset = self.dataset_populator.new_dataset(history_id, content="a\tb\nc\td\n", wait=True)
        with self.mcp_client() as client:
            names = {tool.name for tool in client.list_tools()}
            assert {"peek_dataset_content", "connect", "run_tool"} <= names
            chunk = client.call_ok("peek_dataset_content", dataset_id=dataset["id"], max_bytes=4, api_key=self.mcp_api_key)
        assert chunk["content"] == "a\tb\n"
        assert chunk["next_offset"] == 4
