"""What a tool is and how it has been run: its own test cases as examples.

Galaxy 26.1's stock ``get_tool_run_examples`` reads each test's outputs as objects with a
``name`` attribute; Galaxy keeps them as dicts, so every tool with tests answered an
unexpected server error. This mixin reads the same test descriptions (``tool.tests``) as
what they are; ``core.tool_examples`` turns each into plain JSON.
"""

from typing import Any

from galaxy_mcp_analysis.core.tool_examples import example_from_test

#: ``tool_version`` standing for every version this Galaxy serves.
ALL_VERSIONS = "*"


class ToolInformation:
    """Operations mixin of AnalysisOperationsManager (needs its ``app``, ``trans`` and the tool lookup)."""

    def get_tool_run_examples(self, tool_id: str, tool_version: str | None = None) -> dict[str, Any]:
        """The tool's ``<tests>`` cases (stock method overridden: it failed on every tool with tests)."""
        if tool_version == ALL_VERSIONS:
            default = self._tool_for(tool_id)
            tools = [
                tool
                for tool in self.app.toolbox.get_tool(tool_id, get_all_versions=True) or [default]
                if tool.allow_user_access(self.trans.user)
            ]
        else:
            default = self._tool_for(tool_id, tool_version)
            tools = [default]
        test_cases = [
            example_from_test(
                index,
                tool.version,
                test.inputs,
                test.outputs,
                [collection.name for collection in test.output_collections],
                bool(test.expect_failure),
            )
            for tool in tools
            for index, test in enumerate(tool.tests or [])
        ]
        return {
            "tool_id": tool_id,
            "tool_name": default.name,
            "tool_version": default.version,
            "requested_version": tool_version,
            "test_cases": test_cases,
            "count": len(test_cases),
        }
