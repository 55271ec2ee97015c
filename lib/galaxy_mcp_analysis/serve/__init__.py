"""The local Galaxy of ``make serve``: its configuration (``galaxy_config``) and its launcher.

    python -m galaxy_mcp_analysis.serve --data-dir .galaxy --port 8080

``launcher`` builds Galaxy through the patch set's app factory; the test harness
(``galaxy_mcp_analysis.testing.launcher``) starts the very same command.
"""
