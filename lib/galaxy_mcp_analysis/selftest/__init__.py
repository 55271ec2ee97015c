"""``galaxy-mcp-analysis selftest --url URL``: drive a live Galaxy through its /api/mcp, tool by tool.

With the official ``mcp`` SDK client (streamable HTTP, the key in the ``x-api-key`` header) it runs
a small analysis in a throw-away history: paste two datasets, collect them into a list, map
``Remove beginning1`` over it (one element ends ``ok`` but empty: a silent failure to diagnose),
read the outputs in byte ranges, read the job errors, rerun and cancel a job, write a page that
embeds a dataset, extract a workflow from the history and invoke it, then update, delete, restore
and purge datasets. The steps and the judging of outcomes are ``core.selftest_plan``; the checks
each step makes on its results are ``steps``; ``runner`` holds the session and the clean-up.
Whatever happens, the history is purged and the page and workflow deleted afterwards, through
Galaxy's REST API with the same key (MCP has no tool for those).
"""

from galaxy_mcp_analysis.selftest.runner import (
    mcp_url,
    run,
)

__all__ = ["mcp_url", "run"]
