"""``galaxy-mcp-analysis``: commands an admin runs beside the server.

``check-toolbox``: would the preflight refuse any of a toolbox's own test cases (``toolbox_check``)?
``selftest``: drive a live Galaxy through its /api/mcp, one line per tool (``selftest``).
``oauth``: list or revoke the MCP clients users signed in with (``oauth.admin``).
"""

import argparse
import os
import sys
import tempfile
from pathlib import Path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="galaxy-mcp-analysis", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser(
        "check-toolbox",
        help="send every <tests> case of every tool through the preflight's typed-model stage; runs nothing",
    )
    check.add_argument(
        "tool_conf", nargs="*", type=Path,
        help="Galaxy tool configuration files (default: the toolbox make serve serves, plus TOOL_CONF)",
    )
    selftest = commands.add_parser(
        "selftest",
        help="run a small analysis through a live Galaxy's /api/mcp in a throw-away history, as the key's user",
        description="Key in the GALAXY_API_KEY environment variable. One line per MCP tool exercised "
        "(PASS, FAIL, DENIED by the policy, SKIPPED), then a summary; exit status 1 if any failed.",
    )
    selftest.add_argument("--url", required=True, help="the Galaxy's base URL, e.g. http://127.0.0.1:8080")
    from galaxy_mcp_analysis.oauth import admin as oauth_admin

    oauth_admin.add_parser(commands)
    args = parser.parse_args(argv)
    if args.command == "oauth":
        return oauth_admin.run(args)
    if args.command == "selftest":
        return _selftest(parser, args.url)
    from galaxy_mcp_analysis import toolbox_check

    if missing := [str(path) for path in args.tool_conf if not path.is_file()]:
        parser.error(f"no tool configuration file at {', '.join(missing)}")
    with tempfile.TemporaryDirectory() as scratch:
        confs = args.tool_conf or toolbox_check.default_tool_confs(Path(scratch))
        return toolbox_check.run(confs)


def _selftest(parser, url: str) -> int:
    from galaxy_mcp_analysis import selftest

    api_key = os.environ.get("GALAXY_API_KEY", "").strip()
    if not api_key:
        parser.error("selftest: set GALAXY_API_KEY to the API key of the user to test as")
    return selftest.run(url, api_key, out=lambda line: print(line, flush=True))


if __name__ == "__main__":
    sys.exit(main())
