"""core.tool_search: why a keyword search found a tool."""

from galaxy_mcp_analysis.core.tool_search import (
    BY_INDEX,
    keyword_reasons,
    ranked,
)


def test_the_fields_holding_the_keyword_are_named_else_the_index():
    fields = {"name": "Filter", "description": "data on any column using simple expressions", "id": "Filter1",
              "section": "Filter and Sort"}
    assert keyword_reasons("filter", fields) == ["name", "id", "section"]
    assert keyword_reasons("COLUMN", fields) == ["description"]
    assert keyword_reasons("awk", fields) == [BY_INDEX]


def test_more_keywords_rank_first_and_ties_keep_the_search_order():
    hits = [{"id": "a", "matched_keywords": ["x"]}, {"id": "b", "matched_keywords": ["x", "y"]},
            {"id": "c", "matched_keywords": ["y"]}]
    assert [hit["id"] for hit in ranked(hits)] == ["b", "a", "c"]
