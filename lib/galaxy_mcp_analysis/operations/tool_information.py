"""What a tool is and how it has been run: its details and inputs, its own test cases as examples, its
citations, and its help. Each tool is looked up through the lookup layer (served to the caller);
its declared inputs are read by the one walk, ``operations.declared_inputs``.

Galaxy 26.1's stock ``get_tool_run_examples`` reads each test's outputs as objects with a
``name`` attribute; Galaxy keeps them as dicts, so every tool with tests answered an
unexpected server error. This mixin reads the same test descriptions (``tool.tests``) as
what they are; ``core.tool_examples`` turns each into plain JSON.
"""

import io
from typing import Any

from galaxy_mcp_analysis.core.byte_range import (
    clamp_max_bytes,
    read_chunk,
)
from galaxy_mcp_analysis.core.flat_names import flat_name
from galaxy_mcp_analysis.core.map_over import map_over_hint
from galaxy_mcp_analysis.core.tool_examples import example_from_test
from galaxy_mcp_analysis.core.tool_help import help_as_text
from galaxy_mcp_analysis.core.tool_search import (
    keyword_reasons,
    ranked,
)
from galaxy_mcp_analysis.operations.declared_inputs import (
    data_inputs,
    declared_data_inputs,
)
from galaxy_mcp_analysis.operations.lookup import or_none

#: ``tool_version`` standing for every version this Galaxy serves.
ALL_VERSIONS = "*"


class ToolInformation:
    """Operations mixin of AnalysisOperationsManager (needs its ``app``, ``trans`` and the tool lookup)."""

    def get_tool_details(self, tool_id: str, io_details: bool = False, tool_version: str | None = None) -> dict[str, Any]:
        """Galaxy's tool details of a tool the caller may use, in ``tool_version`` (else the default); with
        io_details each dataset input says how to give it a collection (map-over), and those inside groups
        are listed by their flat names."""
        tool = self.lookup.tool(tool_id, tool_version)
        self.__dict__["_described_tool"] = tool  # Galaxy's method finds the tool by id: this one, in this version
        details = super().get_tool_details(tool.id, io_details) | {"tool_version": tool.version}
        if not io_details:
            return details
        declared = data_inputs(tool.inputs)
        top_level = {data_input.name: data_input for data_input in declared if len(data_input.path) == 1}
        for entry in details["inputs"]:
            if entry["name"] in top_level:
                entry.update(map_over_hint(top_level[entry["name"]]))
        # Galaxy lists only top-level parameters; these are reachable only by their flat names.
        details["nested_data_inputs"] = [
            {"name": data_input.name, "type": "data_collection" if data_input.collection else "data"}
            | map_over_hint(data_input)
            for data_input in declared
            if len(data_input.path) > 1
        ]
        return details

    def _get_toolbox_tool(self, tool_id: str):
        """Galaxy's lookup of a tool by id (its get_tool_details calls it), answering get_tool_details' tool in
        the version asked for: tools outside a ToolShed share one id across versions."""
        described = self.__dict__.get("_described_tool")
        return described if described is not None and described.id == tool_id else super()._get_toolbox_tool(tool_id)

    def get_tool_citations(self, tool_id: str) -> dict[str, Any]:
        """The tool's citations as {type, content} (stock method overridden: it read attributes Galaxy's
        citation objects lack, so a BibTeX citation came back as type "unknown" with no content and a DOI
        as a bound method, which no JSON encoder takes)."""
        tool = self.lookup.tool(tool_id)
        citations = [citation_entry(citation) for citation in tool.citations or []]
        return {"tool_id": tool_id, "tool_name": tool.name, "tool_version": tool.version, "citations": citations,
                "count": len(citations)}

    def get_tool_versions(self, tool_id: str) -> dict[str, Any]:
        """Every version of the tool served, oldest first, each with the id to pass (the ToolShed guid where
        there is one); ``default`` marks the version Galaxy runs for ``tool_id`` when no version is given."""
        default = self.lookup.tool(tool_id)
        versions = self.lookup.tool_versions(tool_id) or [default]
        return {
            "tool_id": tool_id,
            "name": default.name,
            "default_version": default.version,
            "versions": [
                {"version": tool.version, "id": tool.id, "default": tool is default,
                 **({"tool_shed_repository": _repository(tool)} if tool.tool_shed else {})}
                for tool in versions
            ],
            "count": len(versions),
        }

    def get_tool_run_examples(self, tool_id: str, tool_version: str | None = None) -> dict[str, Any]:
        """The tool's ``<tests>`` cases (stock method overridden: it failed on every tool with tests)."""
        if tool_version == ALL_VERSIONS:
            default = self.lookup.tool(tool_id)
            tools = [
                tool
                for tool in self.app.toolbox.get_tool(tool_id, get_all_versions=True) or [default]
                if tool.allow_user_access(self.trans.user)
            ]
        else:
            default = self.lookup.tool(tool_id, tool_version)
            tools = [default]
        test_cases = [
            example_from_test(
                index,
                tool.version,
                test.inputs,
                test.outputs,
                [collection.name for collection in test.output_collections],
                bool(test.expect_failure),
            )
            for tool in tools
            for index, test in enumerate(tool.tests or [])
        ]
        return {
            "tool_id": tool_id,
            "tool_name": default.name,
            "tool_version": default.version,
            "requested_version": tool_version,
            "test_cases": test_cases,
            "count": len(test_cases),
        }

    def search_tools_by_keywords(self, keywords: list[str]) -> dict[str, Any]:
        """Galaxy's tool search per keyword; each hit says which keywords found it and where they occur
        (stock method overridden: it reported only name/description matches, often none)."""
        found_by: dict[str, list[str]] = {}
        for keyword in dict.fromkeys(keywords):  # a keyword given twice is searched and listed once
            for tool_id in self._search_toolbox(keyword):
                found_by.setdefault(tool_id, []).append(keyword)
        hits = []
        for tool_id, matched in found_by.items():
            tool = or_none(lambda tool_id=tool_id: self.lookup.tool(tool_id))
            if tool is None:  # not served to the caller
                continue
            fields = {"name": tool.name or "", "description": tool.description or "", "id": tool.id,
                      "section": tool.get_panel_section()[1] or ""}
            hits.append({
                "id": tool.id,
                "name": tool.name,
                "description": tool.description or "",
                "version": tool.version,
                "matched_keywords": matched,
                "matched_in": {keyword: keyword_reasons(keyword, fields) for keyword in matched},
            })
        hits = ranked(hits)
        return {"keywords": keywords, "tools": hits, "count": len(hits)}

    def get_tool_help(
        self, tool_id: str, tool_version: str | None = None, offset: int = 0, max_bytes: int = 8192
    ) -> dict[str, Any]:
        """The tool's help as plain text, a byte range of it, with what else tells how to use it."""
        tool = self.lookup.tool(tool_id, tool_version)
        applied, capped = clamp_max_bytes(max_bytes, self.settings.max_read_bytes)
        help_source = tool.raw_help
        text = help_as_text(help_source.content) if help_source is not None else ""
        encoded = text.encode()
        # An offset past the end reads nothing (eof); BytesIO cannot seek past 2**63.
        chunk = read_chunk(io.BytesIO(encoded), min(offset, len(encoded)), applied)
        section_id, section_name = tool.get_panel_section()
        return {
            "tool_id": tool.id,
            "tool_version": tool.version,
            "version": tool.version,  # the name before tool_version; kept for one release
            "name": tool.name,
            "description": tool.description or "",
            "panel_section": {"id": section_id, "name": section_name} if section_id else None,
            "help_text": chunk.content,
            "help_format": help_source.format if help_source is not None else None,
            "help_bytes": len(encoded),
            "offset": chunk.offset,
            "next_offset": chunk.next_offset,
            "eof": chunk.eof,
            "max_bytes_applied": applied,
            "capped": capped,
            "citations": [_citation_text(citation) for citation in tool.citations or []],
            "requirements": [
                {"name": requirement.name, "version": requirement.version, "type": requirement.type}
                for requirement in tool.requirements
            ],
            "input_formats": _input_formats(tool.inputs),
            "output_formats": {name: _output_format(output) for name, output in tool.outputs.items()},
        }


def citation_entry(citation) -> dict[str, str]:
    """One of Galaxy's parsed citations as ``{type, content}``: a DOI as written in the tool, else its BibTeX."""
    if citation.has_doi():
        return {"type": "doi", "content": citation.doi()}
    return {"type": "bibtex", "content": citation.to_bibtex().strip()}


def _citation_text(citation) -> str:
    """A DOI as ``doi:...`` (Galaxy would fetch its BibTeX from doi.org), else the tool's own BibTeX."""
    return f"doi:{citation.doi()}" if citation.has_doi() else citation.to_bibtex().strip()


def _input_formats(inputs: dict) -> dict[str, dict[str, Any]]:
    """Each data input's accepted datatypes (and collection types), by its flat path; inside a repeat
    ``name[n]|inner`` (the keys get_tool_help has always given), one entry for every block."""
    found: dict[str, dict[str, Any]] = {}
    for declared in declared_data_inputs(inputs):
        parameter = declared.parameter
        entry: dict[str, Any] = {"formats": list(getattr(parameter, "extensions", None) or []),
                                 "optional": bool(parameter.optional)}
        if declared.kind == "data_collection":
            entry["collection_types"] = list(parameter.collection_types or [])
        elif getattr(parameter, "multiple", False):
            entry["multiple"] = True
        path = ""
        for position, name in enumerate(declared.path):
            path = flat_name(path, f"{name}[n]" if position in declared.repeats else name)
        found[path] = entry
    return found


def _output_format(output) -> str:
    if getattr(output, "collection", False):
        return f"collection {output.structure.collection_type or '(type from the input)'}"
    if output.format_source:
        return f"the format of input {output.format_source}"
    return output.format or "data"


def _repository(tool) -> dict[str, str]:
    """Where a ToolShed tool was installed from, as Galaxy's toolbox recorded it."""
    return {"tool_shed": tool.tool_shed, "name": tool.repository_name, "owner": tool.repository_owner,
            "changeset_revision": tool.installed_changeset_revision}
