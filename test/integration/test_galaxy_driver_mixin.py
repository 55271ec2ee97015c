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

    def test_a_read_costs_the_statements_of_rest_plus_one(self):
        """A ranged read runs REST's display statements (the key, the dataset and Galaxy's access check)
        plus one asking whether a collection or library dataset has the same id (issue 20: was two)."""
        from galaxy.model.base import REQUEST_ID
        from sqlalchemy import event

        history_id = self.dataset_populator.new_history()
        dataset = self.dataset_populator.new_dataset(history_id, content="a\tb\nc\td\n", wait=True)
        statements: dict[str, list[str]] = {}

        def count(conn, cursor, statement, parameters, context, executemany):
            request = (REQUEST_ID.get() or {}).get("request") or ""
            statements.setdefault(request, []).append(statement)

        engine = self._app.model.engine
        with self.mcp_client() as client:
            client.call_ok("peek_dataset_content", dataset_id=dataset["id"], api_key=self.mcp_api_key)  # warm
            event.listen(engine, "before_cursor_execute", count)
            try:
                client.call_ok("peek_dataset_content", dataset_id=dataset["id"], api_key=self.mcp_api_key)
                self._get(f"datasets/{dataset['id']}/display", {"offset": 0, "ck_size": 64}).raise_for_status()
            finally:
                event.remove(engine, "before_cursor_execute", count)
        (mcp,) = [sql for request, sql in statements.items() if request.startswith("mcp-")]
        rest = [sql for request, sql in statements.items() if request and not request.startswith("mcp-")]
        assert len(rest) == 1, statements.keys()
        assert len(mcp) == len(rest[0]) + 1, (mcp, rest[0])

    def test_a_job_survey_costs_the_statements_of_rests_listing_plus_at_most_two(self):
        """wait_for_jobs(history_id) and list_jobs of a 3-job map-over run Galaxy's job listing's statements (the
        key, the history, the jobs) plus at most two (the outputs, and whether a newer dataset took an output's
        place): none per job, and none of the three index pages a history wait read before (issue 50: 13 -> 8)."""
        from galaxy.model.base import REQUEST_ID
        from galaxy_test.base.populators import DatasetCollectionPopulator
        from sqlalchemy import event

        history_id = self.dataset_populator.new_history()
        listed = DatasetCollectionPopulator(self.galaxy_interactor).create_list_in_history(
            history_id, contents=["a\tb\n", "c\td\n", "e\tf\n"], wait=True).json()["output_collections"][0]
        inputs = {"input1": {"batch": True, "values": [{"src": "hdca", "id": listed["id"]}]}}
        ran = self.dataset_populator.run_tool("cat1", inputs, history_id)
        assert len(ran["jobs"]) == 3
        self.dataset_populator.wait_for_history_jobs(history_id, assert_ok=True)
        statements: dict[str, list[str]] = {}

        def count(conn, cursor, statement, parameters, context, executemany):
            request = (REQUEST_ID.get() or {}).get("request") or ""
            statements.setdefault(request, []).append(statement)

        engine = self._app.model.engine
        calls = {
            "wait_for_jobs": {"history_id": history_id, "timeout_seconds": 0},
            "list_jobs": {"history_id": history_id},
        }
        with self.mcp_client() as client:
            for tool, arguments in calls.items():
                client.call_ok(tool, api_key=self.mcp_api_key, **arguments)  # warm
                statements.clear()
                event.listen(engine, "before_cursor_execute", count)
                try:
                    result = client.call_ok(tool, api_key=self.mcp_api_key, **arguments)
                    self._get("jobs", {"history_id": history_id}).raise_for_status()
                finally:
                    event.remove(engine, "before_cursor_execute", count)
                (mcp,) = [sql for request, sql in statements.items() if request.startswith("mcp-")]
                (rest,) = [sql for request, sql in statements.items() if request and not request.startswith("mcp-")]
                assert len(mcp) <= len(rest) + 2, (tool, mcp, rest)
                listed_jobs = result["recently_finished"] if tool == "wait_for_jobs" else result["jobs"]
                assert [job["state"] for job in listed_jobs if job["tool_id"] == "cat1"] == ["ok"] * 3, result
