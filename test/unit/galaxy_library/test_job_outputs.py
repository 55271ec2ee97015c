"""jobs.job_output: a job's outputs read against the tool's outputs as Galaxy parses them.

The bundled tools of the test server declare no optional or discovered outputs, so
this is where the "may be empty" side of the silent-failure rule meets real Galaxy
objects (ToolOutput, ToolOutputCollection) parsed from a tool's XML.
"""

from decimal import Decimal
from types import SimpleNamespace

import pytest
from galaxy.tool_util.parser import get_tool_source

from galaxy_mcp_analysis.core.job_logs import (
    judge_outputs,
    JobEvidence,
)
from galaxy_mcp_analysis.core.job_records import (
    dataset_size,
    OutputRecord,
)
from galaxy_mcp_analysis.operations.jobs.failures import job_output

TOOL_XML = """<tool id="outputs_demo" name="outputs demo" version="1.0" profile="21.01">
  <command>true</command>
  <inputs><param name="extra" type="boolean"/></inputs>
  <outputs>
    <data name="main" format="txt"/>
    <data name="unmatched" format="txt"><filter>extra</filter></data>
    <data name="report" format="txt"><discover_datasets pattern="__designation__" directory="out" format="txt"/></data>
    <collection name="split" type="list"><discover_datasets pattern="__name__" directory="parts" format="txt"/></collection>
    <collection name="pair" type="paired"><data name="forward" format="txt"/><data name="reverse" format="txt"/></collection>
    <collection name="maybe_pair" type="paired"><data name="forward" format="txt"/><data name="reverse" format="txt"/>
      <filter>extra</filter></collection>
  </outputs>
</tool>
"""


@pytest.fixture(scope="module")
def tool(tmp_path_factory):
    path = tmp_path_factory.mktemp("tool") / "outputs_demo.xml"
    path.write_text(TOOL_XML)
    outputs, collections = get_tool_source(str(path)).parse_outputs(None)
    return SimpleNamespace(outputs=outputs, output_collections=collections)


def association(name: str, size=Decimal(0), purged=False, state="ok"):
    """One output as list_jobs and wait_for_jobs read it: the association's name, its dataset's id, state and size."""
    return OutputRecord(name=name, dataset_id=7, state=state, size=dataset_size(False, purged, size))


@pytest.mark.parametrize(
    ("name", "optional", "discovered"),
    [
        ("main", False, False),
        ("unmatched", True, False),
        ("report", False, True),  # the primary of an output that discovers datasets
        ("__new_primary_file_report|sample1__", False, True),
        ("__new_primary_file_split|a__", False, True),
        ("pair|__part__|forward", False, False),
        ("maybe_pair|__part__|reverse", True, False),
    ],
)
def test_outputs_are_read_from_the_tools_declarations(tool, name, optional, discovered):
    output = job_output(association(name), tool, encode_id=lambda i: f"enc{i}")
    assert (output.name, output.dataset_id, output.size) == (name, "enc7", 0)
    assert (output.optional, output.discovered) == (optional, discovered)


def test_without_the_tool_every_output_is_required():
    output = job_output(association("unmatched"), None, encode_id=str)
    assert (output.optional, output.discovered) == (False, False)
    assert judge_outputs("ok", [output], JobEvidence(tool_stderr_bytes=1)).suspected_silent_failure is True


LEGACY_TOOL_XML = """<tool id="legacy_demo" name="legacy demo" version="1.0">
  <command>true</command>
  <inputs/>
  <outputs><data name="out_file1" format="tabular"/></outputs>
</tool>
"""


def test_galaxys_legacy_default_collector_does_not_make_an_ordinary_output_discovered(tmp_path):
    """A tool with no profile (Cut1, sort1 ...) gets Galaxy's default collector on every output."""
    path = tmp_path / "legacy_demo.xml"
    path.write_text(LEGACY_TOOL_XML)
    outputs, collections = get_tool_source(str(path)).parse_outputs(None)
    assert outputs["out_file1"].dataset_collector_descriptions  # Galaxy's legacy default is there
    legacy = SimpleNamespace(outputs=outputs, output_collections=collections)
    assert job_output(association("out_file1"), legacy, str).discovered is False


def test_an_output_in_error_is_marked_failed(tool):
    assert job_output(association("main", state="error"), tool, str).failed is True
    assert job_output(association("main"), tool, str).failed is False


def test_sizes_are_ints_and_purged_or_unknown_sizes_are_none(tool):
    assert job_output(association("main", size=Decimal(12)), tool, str).size == 12
    assert job_output(association("main", size=None), tool, str).size is None
    assert job_output(association("main", purged=True), tool, str).size is None
