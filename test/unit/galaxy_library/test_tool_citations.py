"""get_tool_citations' entries from Galaxy's own parsed citation objects (no served tool cites anything,
so the integration suite cannot reach this through /api/mcp)."""

from types import SimpleNamespace

from galaxy.managers.citations import (
    BibtexCitation,
    DoiCitation,
)
from galaxy.tool_util_models.tool_source import Citation

from galaxy_mcp_analysis.operations.tool_information import citation_entry

BIBTEX = "@article{x, title={A tool}, year={2026}}"


def test_a_doi_is_given_as_the_tool_writes_it_without_fetching_anything():
    manager = SimpleNamespace(doi_cache=None)  # reaching doi.org would need the cache: the entry must not
    citation = DoiCitation(Citation(type="doi", content="10.1093/bioinformatics/btp352"), manager)
    assert citation_entry(citation) == {"type": "doi", "content": "10.1093/bioinformatics/btp352"}


def test_a_bibtex_citation_is_its_own_text():
    citation = BibtexCitation(Citation(type="bibtex", content=f"  {BIBTEX}\n"), SimpleNamespace())
    assert citation_entry(citation) == {"type": "bibtex", "content": BIBTEX}
