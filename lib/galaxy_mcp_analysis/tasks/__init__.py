"""MCP tasks (issue 52): a long call's durable handle, for clients that declare ``io.modelcontextprotocol/tasks``.

``store`` (the patch set's table in Galaxy's database), ``answers`` (the middleware that answers a
task-capable ``tools/call`` with a task), ``extension`` (the FastMCP server extension serving
``tasks/get``, ``tasks/update`` and ``tasks/cancel``), ``service`` (what those do, in a worker thread
with a database session of its own), ``wire`` (the request params, shared with the test client).
The rules are ``core.tasks``; the jobs' states and their stop ``operations.jobs.tasks``; activated by
``activation/tasks.py``.
"""
