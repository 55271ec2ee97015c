"""Galaxy's typed model of a tool's parameters as the preflight, the schemas and check-toolbox use it:
Galaxy's own (``tool.parameters``, or ``input_models_for_tool_source``) with the empty branches
Galaxy's tool loader gives a test value without a ``<when>`` (``core.conditional_branches``) and the
formats a tool's XML declares for each data and collection input, read by Galaxy's tool source (the
reader Galaxy's own parameter factory uses), where Galaxy 26.1.0 and 26.1.1 left them out
(``core.declared_formats``)."""

from collections.abc import Iterator

from galaxy.tool_util.parser.factory import get_tool_source
from galaxy.tool_util_models.parameters import ConditionalWhen

from galaxy_mcp_analysis.core.conditional_branches import with_implicit_branches
from galaxy_mcp_analysis.core.declared_formats import (
    formats_left_out,
    one_declaration_per_path,
    Path,
    with_declared_formats,
)

DATA_TYPES = ("data", "data_collection")


def modelled_parameters(parameters, tool_source) -> list:
    """Galaxy's typed ``parameters`` of the tool ``tool_source`` describes, completed as above."""
    completed = with_implicit_branches(list(parameters), ConditionalWhen)
    if not formats_left_out(completed):  # every data input names its formats: nothing to read
        return completed
    return with_declared_formats(completed, declared_formats(parsed(tool_source)))


def parsed(tool_source):
    """The tool source with its XML tree: Galaxy frees a loaded tool's tree (``mem_optimize``) and keeps
    its text, which it parses again itself where it needs the tree (tool requests)."""
    if getattr(tool_source, "root", True) is not None:
        return tool_source
    return get_tool_source(raw_tool_source=tool_source.to_string(), tool_source_class=type(tool_source).__name__)


def declared_formats(tool_source) -> dict[Path, list[str]]:
    """{input names from the top: formats} of every data and collection input of ``tool_source``."""
    declarations = []
    for page_source in tool_source.parse_input_pages().page_sources:
        declarations += list(_page_declarations(page_source, ()))
    return one_declaration_per_path(declarations)


def _page_declarations(page_source, path: Path) -> Iterator[tuple[Path, list[str]]]:
    for input_source in page_source.parse_input_sources():
        yield from _declarations(input_source, path)


def _declarations(input_source, path: Path) -> Iterator[tuple[Path, list[str]]]:
    kind = input_source.parse_input_type()
    if kind == "param":  # a parameter's name may come from its argument= (--input_file -> input_file)
        if input_source.get("type") in DATA_TYPES:
            yield path + (input_source.parse_name(),), list(input_source.parse_extensions())
        return
    here = path + (input_source.get("name"),)
    if kind == "conditional":
        for _, case_sources in input_source.parse_when_input_sources():
            yield from _page_declarations(case_sources, here)
    elif kind in ("repeat", "section"):
        yield from _page_declarations(input_source.parse_nested_inputs_source(), here)
