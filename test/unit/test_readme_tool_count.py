"""The README's tool count is doc/tools.md's, which test_every_tool.py keeps equal to the live tools/list
(and test_the_readme_counts_the_tools_tools_list_serves checks against tools/list directly)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_readme_counts_the_tools_doc_tools_md_lists():
    [generated] = re.findall(r"^(\d+) tools; the `tools/list` answer", (ROOT / "doc" / "tools.md").read_text(), re.M)
    assert re.findall(r"lists all (\d+) tools", (ROOT / "README.md").read_text()) == [generated]
