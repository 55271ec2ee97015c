"""``galaxy-mcp-analysis``: commands an admin runs beside the server.

``check-toolbox``: would the preflight refuse any of a toolbox's own test cases (``toolbox_check``)?
"""

import argparse
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
    args = parser.parse_args(argv)
    from galaxy_mcp_analysis import toolbox_check

    if missing := [str(path) for path in args.tool_conf if not path.is_file()]:
        parser.error(f"no tool configuration file at {', '.join(missing)}")
    with tempfile.TemporaryDirectory() as scratch:
        confs = args.tool_conf or toolbox_check.default_tool_confs(Path(scratch))
        return toolbox_check.run(confs)


if __name__ == "__main__":
    sys.exit(main())
