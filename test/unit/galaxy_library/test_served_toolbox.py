"""The toolbox make serve and the tests serve: Galaxy's default, less what cannot run here (needs
the galaxy package for its sample tool_conf.xml and tool parser; no server)."""

import xml.etree.ElementTree as ET

from galaxy.tool_util.parser import get_tool_source

from galaxy_mcp_analysis.serve.toolbox import (
    default_toolbox,
    missing_parts,
    on_path,
)


def programs(*names):
    return lambda name: name in names


def test_a_package_requirement_is_met_by_a_program_or_a_python_package_a_binary_only_by_a_program():
    requirements = [("package", "samtools"), ("package", "bx-python"), ("binary", "numpy"), ("package", "python")]
    missing = missing_parts(requirements, "python '$__tool_directory__/x.py'", None,
                            has_program=programs("samtools"), has_package=lambda name: name in ("bx-python", "numpy"))
    assert missing == ["requirement numpy (binary) is neither a program on PATH nor an installed Python package"]


def test_the_interpreter_a_command_starts_with_or_declares_must_be_installed():
    assert missing_parts([], "Rscript $script", None, has_program=programs("perl")) == [
        "its interpreter Rscript is not installed"]
    assert missing_parts([], "x.pl $input", "perl", has_program=programs()) == ["its interpreter perl is not installed"]
    assert missing_parts([], "perl $script", None, has_program=programs("perl")) == []
    assert missing_parts([], "#if $x\nRscript a\n#end if", None, has_program=programs()) == [
        "its interpreter Rscript is not installed"]  # Cheetah directives are not the command
    assert missing_parts([], "cat $x | Rscript a", None, has_program=programs()) == []  # only the first word is judged
    assert missing_parts([], "python x.py", None, has_program=programs()) == []  # Galaxy's own virtualenv


def test_coreutils_is_met_by_the_programs_it_provides():
    assert on_path("coreutils") and not on_path("coreutils-of-another-planet")


def test_the_default_toolbox_is_galaxys_sample_less_what_cannot_run_here():
    toolbox = default_toolbox()
    served_ids = {get_tool_source(str(path)).parse_id() for path in toolbox.served}
    # The tools a fresh Galaxy offers that the ten hand-picked text tools lacked.
    assert {"Filter1", "join1", "Grouping1", "Count1", "cat1", "sort1", "Grep1", "__BUILD_LIST__"} <= served_ids
    assert len(toolbox.served) > 90
    assert all(left.reason and left.tool_id for left in toolbox.left_out), toolbox.left_out
    left_ids = {left.tool_id for left in toolbox.left_out}
    assert not left_ids & served_ids
    # liftOver needs UCSC's liftOver program, which this machine lacks (a Conda package Galaxy does not resolve here).
    assert "liftOver1" in left_ids
    root = ET.fromstring(toolbox.xml)
    sections = [section.get("name") for section in root.iter("section")]
    assert sections[:2] == ["Get Data", "Send Data"] and "Text Manipulation" in sections
    assert "Interactive tools" not in sections  # commented out in Galaxy's sample: they need a container runtime
    assert len(list(root.iter("tool"))) == len(toolbox.served)
