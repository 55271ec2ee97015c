"""galaxy-mcp-analysis check-toolbox: each tool's own test cases through the preflight's typed-model stage."""

import subprocess
import sys
from pathlib import Path

from galaxy_mcp_analysis import toolbox_check

CORPUS_CONF = Path(__file__).parents[2] / "corpus" / "tool_conf.xml"
SHED_CONF = Path(__file__).parents[2] / "corpus" / "shed" / "shed_tool_conf.xml"
GUID = "toolshed.example.org/repos/mcp_corpus/corpus_lines/corpus_lines/"

WRONG_TEST = """<tool id="wrong_test" name="wrong test" version="0.1">
  <command>true</command>
  <inputs><param name="order" type="select"><option value="asc">Up</option><option value="desc">Down</option></param></inputs>
  <outputs><data name="out" format="txt"/></outputs>
  <tests><test><param name="order" value="sideways"/></test><test><param name="order" value="desc"/></test></tests>
</tool>
"""


def test_the_corpus_tools_are_found_through_their_tool_conf_dir():
    assert [path.name for path in toolbox_check.tool_files([CORPUS_CONF])] == [
        "corpus_branches.xml", "corpus_metadata_options.xml", "corpus_formats.xml", "corpus_scalars.xml",
        "corpus_scalars_legacy.xml", "corpus_selects.xml", "corpus_dynamic_options.xml", "corpus_columns.xml",
        "corpus_builds_trees.xml", "corpus_data.xml", "corpus_conditionals.xml", "corpus_groups.xml",
        "corpus_legacy_groups.xml", "corpus_validators.xml", "corpus_branch_values.xml", "corpus_genome_choice.xml"]


def test_every_test_case_of_the_corpus_is_accepted_and_data_is_left_to_galaxy():
    lines: list[str] = []
    assert toolbox_check.run([CORPUS_CONF], out=lines.append) == 0
    assert lines[0] == "corpus_branches 1.0.0: 2 cases: 2 accepted, 0 refused, 0 values left to Galaxy"
    assert lines[1] == "corpus_metadata_options 1.0.0: 1 cases: 1 accepted, 0 refused, 2 values left to Galaxy"
    # a test value without a <when> is an empty branch, as Galaxy runs it: all three cases are built and accepted
    assert "corpus_branch_values 1.0.0: 3 cases: 3 accepted, 0 refused, 0 values left to Galaxy" in lines
    assert lines[-1].startswith("check-toolbox: 16 tools in 16 versions (16 modelled), 31 test cases: 31 accepted, 0 refused, "
                                "0 of unmodelled tools passed on; 27 values left to Galaxy"), lines[-1]


def test_a_shed_toolbox_is_reported_per_version_under_its_guids():
    lines: list[str] = []
    assert toolbox_check.run([SHED_CONF], out=lines.append) == 0
    assert lines[:3] == [
        f"corpus_lines {version}: 1 cases: 1 accepted, 0 refused, 1 values left to Galaxy"
        .replace(":", f" ({GUID}{version}):", 1)
        for version in ("1.0.0", "1.1.0", "2.0.0")
    ], lines
    assert lines[-1].startswith("check-toolbox: 1 tools in 3 versions (3 modelled), 3 test cases: 3 accepted, "), lines
    assert lines[-1].endswith(" s"), lines[-1]


def test_a_refused_case_is_printed_with_its_path_and_fails_the_check(tmp_path):
    (tmp_path / "wrong.xml").write_text(WRONG_TEST)
    conf = tmp_path / "tool_conf.xml"
    conf.write_text('<toolbox tool_path="${tool_conf_dir}"><tool file="wrong.xml"/></toolbox>')
    lines: list[str] = []
    assert toolbox_check.run([conf], out=lines.append) == 1
    assert lines[0] == "wrong_test 0.1: 2 cases: 1 accepted, 1 refused, 0 values left to Galaxy"
    assert lines[1].startswith("  refused: test 1 (nested): inputs.order: 'sideways' is not an option of 'order'"), lines
    assert "1 refused" in lines[-1]


def test_the_command_checks_the_served_toolbox_by_default_and_exits_0():
    done = subprocess.run([sys.executable, "-m", "galaxy_mcp_analysis.cli", "check-toolbox"], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    summary = done.stdout.strip().splitlines()[-1]
    assert summary.startswith("check-toolbox: 93 tools in 101 versions (100 modelled), 179 test cases: 179 accepted, 0 refused"), summary
