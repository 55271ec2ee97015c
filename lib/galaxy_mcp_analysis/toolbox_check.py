"""``galaxy-mcp-analysis check-toolbox``: would the preflight refuse any of a toolbox's own test cases?

Every ``<tests>`` case of every tool in the tool configuration files (by default the toolbox
``make serve`` serves, plus ``TOOL_CONF``) is built with Galaxy's own test-case model (as
Galaxy's test framework builds it from the test's parameter names, unvalidated) and sent through
the preflight's typed-model stage (``core.tool_input_problems.model_problems``) in the nested and
the flat form. Nothing is run and no Galaxy is needed. What depends on data (a dataset's datatype, options
computed from a dataset or another parameter) is counted as left to Galaxy: the running server
judges those with the request's own datasets. A refused case is a false refusal: the exit status
is then 1.
"""

import os
import string
import time
import xml.etree.ElementTree as ElementTree
from dataclasses import (
    dataclass,
    field,
)
from pathlib import Path
from typing import Any

from galaxy_mcp_analysis.core import tool_inputs as rules
from galaxy_mcp_analysis.core.tool_input_problems import model_problems

#: A well-formed encoded id standing for a test's data file (the typed model checks the form only).
PLACEHOLDER_ID = "0" * 16


@dataclass
class ToolReport:
    tool_id: str
    version: str
    modelled: bool
    guid: str | None = None
    cases: int = 0
    accepted: int = 0
    refused: int = 0
    refusals: list[str] = field(default_factory=list)
    left_to_galaxy: int = 0
    note: str = ""

    def line(self) -> str:
        name = f"{self.tool_id} {self.version}" + (f" ({self.guid})" if self.guid else "")
        if not self.modelled:
            return f"{name}: not modelled ({self.note}); {self.cases} cases left to Galaxy"
        return (f"{name}: {self.cases} cases: {self.accepted} accepted, "
                f"{self.refused} refused, {self.left_to_galaxy} values left to Galaxy")


def tool_entries(tool_confs: list[Path]) -> list[tuple[Path, str | None, str | None]]:
    """``(tool XML file, guid, version)`` of each tool a list of Galaxy tool configuration files names, the
    paths resolved as Galaxy's toolbox resolves them: ``tool_path`` with ``${tool_conf_dir}`` substituted,
    relative paths from the working directory (Galaxy's root). A tool installed from a ToolShed (a
    ``shed_tool_conf.xml``) has the ``guid`` and ``<version>`` its installer wrote, which Galaxy serves it
    under; others have None."""
    entries = []
    for conf in tool_confs:
        root = ElementTree.parse(conf).getroot()
        tool_path = string.Template(root.get("tool_path", "")).safe_substitute(tool_conf_dir=str(conf.parent))
        entries += [(Path(tool_path) / element.get("file"), element.get("guid"), element.findtext("version"))
                    for element in root.iter("tool") if element.get("file")]
    return entries


def tool_files(tool_confs: list[Path]) -> list[Path]:
    """The tool XML files a list of Galaxy tool configuration files names (``tool_entries``)."""
    return [path for path, _, _ in tool_entries(tool_confs)]


def tool_parameters(source) -> list:
    """Galaxy's typed parameter models of a tool source as the served preflight has them
    (``operations.tool_models``)."""
    from galaxy.tool_util.parameters import input_models_for_tool_source

    from galaxy_mcp_analysis.operations.tool_models import modelled_parameters

    return modelled_parameters(input_models_for_tool_source(source).parameters, source)


def check_tool(path: Path, guid: str | None = None, installed_version: str | None = None) -> ToolReport:
    from galaxy.tool_util.parser import get_tool_source
    from galaxy.tool_util_models.parameters import create_field_model

    source = get_tool_source(str(path))
    tool_id, version = source.parse_id(), installed_version or source.parse_version() or "?"
    tests = source.parse_tests_to_dict()["tests"]
    try:
        parameters = tool_parameters(source)
        relaxed = create_field_model(parameters, f"{tool_id}_relaxed", "relaxed_request")
    except Exception as error:  # Galaxy's typed model cannot describe it: run_tool passes its inputs on
        return ToolReport(tool_id, version, False, guid, cases=len(tests), note=f"{type(error).__name__}")
    report = ToolReport(tool_id, version, True, guid)
    for number, state in tool_test_cases(source, parameters):
        report.cases += 1
        request = _with_placeholders(state)
        request, _ = rules.null_booleans_defaulted(request, parameters, source.parse_profile())  # as served
        found = []
        for form, inputs in (("nested", request), ("flat", rules.nested_to_flat(request, parameters))):
            _, _, problems = model_problems(inputs, parameters, relaxed, "inputs", f"Tool {tool_id!r}")
            found += [f"test {number} ({form}): {problem.path}: {problem.message}" for problem in problems]
        if found:
            report.refused += 1
            report.refusals += found
        else:
            report.accepted += 1
            report.left_to_galaxy += _data_dependent(request, parameters)
    return report


def tool_test_cases(source, parameters: list) -> list[tuple[int, dict]]:
    """``(number, nested state)`` of each ``<tests>`` case, numbered from 1, as Galaxy's test framework
    builds it from the test's parameter names (unvalidated); data files stay ``{"class": "File", ...}`` and
    collections ``{"class": "Collection", ...}``. A case Galaxy cannot build is never sent: it is left out."""
    from galaxy.tool_util.parameters import test_case_state

    cases = []
    for number, test in enumerate(source.parse_tests_to_dict()["tests"], start=1):
        try:
            cases.append((number, test_case_state(test, parameters, source.parse_profile(), validate=False)
                          .tool_state.input_state))
        except Exception:  # Galaxy's test framework cannot build this case either
            continue
    return cases


def _with_placeholders(value: Any) -> Any:
    if isinstance(value, dict):
        if value.get("class") == "File":
            return {"src": "hda", "id": PLACEHOLDER_ID}
        if value.get("class") == "Collection":
            return {"src": "hdca", "id": PLACEHOLDER_ID}
        return {key: _with_placeholders(inner) for key, inner in value.items()}
    if isinstance(value, list):
        return [_with_placeholders(inner) for inner in value]
    return value


def _data_dependent(state: dict, parameters: list) -> int:
    """Values the running server judges with the request's datasets: data inputs (their datatypes) and
    selects with no static options (computed from datasets or other parameters)."""
    return sum(
        1
        for _, parameter, value in rules.leaf_values(state, parameters)
        if value is not None
        and (parameter.parameter_type in (rules.DATA, rules.COLLECTION)
             or (parameter.parameter_type == "gx_select" and getattr(parameter, "options", None) is None))
    )


def default_tool_confs(data_dir: Path) -> list[Path]:
    """The toolbox ``make serve`` serves (written to ``data_dir``), then ``TOOL_CONF``'s files."""
    from galaxy_mcp_analysis.serve.galaxy_config import toolbox_xml

    data_dir.mkdir(parents=True, exist_ok=True)
    served = data_dir / "check_toolbox_tool_conf.xml"
    served.write_text(toolbox_xml())
    extra = [Path(path.strip()) for path in os.environ.get("TOOL_CONF", "").split(",") if path.strip()]
    return [served, *extra]


def run(tool_confs: list[Path], out=print) -> int:
    """Check every version of every tool; one line per version, each refusal under it, one summary line
    with the time taken. 1 on any refusal."""
    began = time.monotonic()
    reports = []
    for path, guid, version in tool_entries(tool_confs):
        try:
            reports.append(check_tool(path, guid, version))
        except Exception as error:  # a file Galaxy's parser cannot read: Galaxy will not load it either
            out(f"{path}: not loadable ({type(error).__name__}: {str(error)[:120]})")
            continue
        out(reports[-1].line())
        for refusal in reports[-1].refusals:
            out(f"  refused: {refusal}")
    cases = sum(report.cases for report in reports)
    refused = sum(report.refused for report in reports)
    out(
        f"check-toolbox: {len({report.tool_id for report in reports})} tools in {len(reports)} versions "
        f"({sum(report.modelled for report in reports)} modelled), "
        f"{cases} test cases: {sum(report.accepted for report in reports)} accepted, {refused} refused, "
        f"{sum(report.cases for report in reports if not report.modelled)} of unmodelled tools passed on; "
        f"{sum(report.left_to_galaxy for report in reports)} values left to Galaxy; {time.monotonic() - began:.1f} s"
    )
    return 1 if refused else 0
