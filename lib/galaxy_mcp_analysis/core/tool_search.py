"""Why a keyword search found each tool: the fields a keyword occurs in, or Galaxy's index.

Galaxy's tool search indexes more than a tool's name and description (its id, help, labels,
EDAM terms, section); Galaxy 26.1's ``search_tools_by_keywords`` judged hits by name and
description only, so a tool found through its help said ``matched_keywords: []``.
"""

from collections.abc import Mapping

#: What a hit matched in when no field shown in the result holds the keyword.
BY_INDEX = "search index (help, labels or other indexed text)"


def keyword_reasons(keyword: str, fields: Mapping[str, str]) -> list[str]:
    """The names of ``fields`` whose text holds ``keyword`` (case-insensitive), else ``[BY_INDEX]``."""
    wanted = keyword.lower()
    found = [name for name, text in fields.items() if text and wanted in text.lower()]
    return found or [BY_INDEX]


def ranked(hits: list[dict]) -> list[dict]:
    """Hits that matched more keywords first; the sort is stable, so the search's own order breaks ties."""
    return sorted(hits, key=lambda hit: -len(hit["matched_keywords"]))
