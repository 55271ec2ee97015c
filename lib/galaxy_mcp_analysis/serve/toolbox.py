"""The toolbox ``make serve`` and the tests serve: the one a fresh Galaxy offers.

Galaxy ships its default toolbox as ``config/sample/tool_conf.xml.sample`` (sections, labels,
about 130 bundled tools). Served as is, some of those tools would load and then fail every job
on this machine: a tool whose requirement is neither a program on PATH nor a Python package in
Galaxy's environment (this Galaxy resolves no Conda dependencies), or whose interpreter is
missing. Those are left out, each with its reason (``make serve`` prints the count, and writes the
list beside galaxy.yml); everything else is served in Galaxy's own sections and order.
"""

import importlib.metadata
import re
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import quoteattr

#: Where Galaxy's sample toolbox names the collection-operation tools, which live in galaxy/tools.
MODEL_TOOLS = "${model_tools_path}/"
#: Requirement names that are distributions of programs rather than a program: met by one they provide.
PROVIDED_BY = {"coreutils": "cat"}
#: What a command's first word is when it names the interpreter of the tool's script.
INTERPRETERS = ("python", "python3", "perl", "Rscript", "bash", "sh", "java")
LEFT_OUT_FILE = "toolbox_left_out.txt"


@dataclass(frozen=True)
class LeftOut:
    file: str  # as Galaxy's sample names it
    tool_id: str | None
    reason: str

    def line(self) -> str:
        return f"{self.tool_id or '?'} ({self.file}): {self.reason}"


@dataclass(frozen=True)
class Toolbox:
    xml: str
    served: list[Path]  # tool files, in the sample's order
    left_out: list[LeftOut]


def on_path(name: str) -> bool:
    return shutil.which(PROVIDED_BY.get(name, name)) is not None


def installed(name: str) -> bool:
    try:
        importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def missing_parts(
    requirements: list[tuple[str, str]],
    command: str,
    interpreter: str | None,
    *,
    has_program: Callable[[str], bool] = on_path,
    has_package: Callable[[str], bool] = installed,
) -> list[str]:
    """What a tool needs that this machine lacks: its (type, name) requirements, and the
    interpreter its command starts with (or declares). A package requirement is met by a program
    or a Python distribution of that name (Galaxy's jobs run in its own virtualenv); a binary only by
    a program."""
    missing = []
    for kind, name in requirements:
        if kind == "package" and name == "python":
            continue  # the jobs run in Galaxy's virtualenv, whose python is the running one
        if has_program(name) or (kind == "package" and has_package(name)):
            continue
        missing.append(f"requirement {name} ({kind}) is neither a program on PATH nor an installed Python package")
    words = re.sub(r"#.*", "", command).split()
    first = interpreter or (words[0] if words and words[0] in INTERPRETERS else None)
    if first and first not in ("python", "python3") and not has_program(first):
        missing.append(f"its interpreter {first} is not installed")
    return missing


def tool_path(file: str) -> Path:
    import galaxy.tools

    tools_dir = Path(galaxy.tools.__file__).parent
    if file.startswith(MODEL_TOOLS):
        return tools_dir / file[len(MODEL_TOOLS):]
    return tools_dir / "bundled" / file


def judge(file: str) -> tuple[Path | None, LeftOut | None]:
    """(the tool's path, None) if it can be served here, else (None, why not)."""
    from galaxy.tool_util.parser import get_tool_source

    path = tool_path(file)
    if not path.is_file():
        return None, LeftOut(file, None, "this Galaxy release does not ship the file")
    try:
        source = get_tool_source(str(path))
        tool_id = source.parse_id()
    except Exception as error:  # any parse failure: Galaxy would refuse to load it too
        return None, LeftOut(file, None, f"Galaxy cannot parse it: {str(error)[:120]}")
    requirements = [(requirement.type, requirement.name) for requirement in source.parse_requirements()[0]]
    missing = missing_parts(requirements, source.parse_command() or "", source.parse_interpreter())
    if missing:
        return None, LeftOut(file, tool_id, "; ".join(missing))
    return path, None


def default_toolbox() -> Toolbox:
    """Galaxy's default toolbox, less what cannot run here, as a tool_conf.xml."""
    import galaxy.config

    sample = Path(galaxy.config.__file__).parent / "sample" / "tool_conf.xml.sample"
    served: list[Path] = []
    left_out: list[LeftOut] = []
    lines = ["<?xml version='1.0'?>", "<toolbox monitor='false'>"]
    for section in ET.parse(sample).getroot():  # comments (interactive tools) are dropped by the parser
        if section.tag != "section":
            continue
        body = []
        for item in section:
            if item.tag == "label":
                body.append(f"    <label id={quoteattr(item.get('id', ''))} text={quoteattr(item.get('text', ''))}/>")
            elif item.tag == "tool":
                path, why_not = judge(item.get("file", ""))
                if why_not:
                    left_out.append(why_not)
                    continue
                served.append(path)
                body.append(f"    <tool file={quoteattr(str(path))}/>")
        if any("<tool " in line for line in body):
            lines.append(f"  <section id={quoteattr(section.get('id', ''))} name={quoteattr(section.get('name', ''))}>")
            lines += [*body, "  </section>"]
    lines.append("</toolbox>")
    return Toolbox("\n".join(lines) + "\n", served, left_out)
