"""A collection as an agent needs to see it: small whatever the collection's size.

Galaxy's element view of a collection lists every element with its whole dataset
(tens of fields each); for a 10,000-element list that is megabytes an agent pays
for in tokens. The summary keeps the collection's own fields and, for at most
``limit`` elements (counted across nesting levels, depth first), the identifier,
the object's id and its state. ``get_collection_details`` pages through the rest.
"""

from collections.abc import Callable
from typing import Any

#: Elements summarised in a result; the rest are counted, not listed.
ELEMENT_SUMMARY_LIMIT = 50

Encode = Callable[[Any], str]


def collection_fields(hdca: dict[str, Any]) -> dict[str, Any]:
    """The fields every collection result carries, from Galaxy's serialization of an HDCA."""
    return {
        "hid": hdca.get("hid"),
        "name": hdca.get("name"),
        "collection_type": hdca.get("collection_type"),
        "element_count": hdca.get("element_count"),
        "populated_state": hdca.get("populated_state"),
    }


def summarize_elements(elements: list[dict[str, Any]], encode: Encode, limit: int = ELEMENT_SUMMARY_LIMIT) -> dict:
    """``{"elements": [...], "elements_shown": n, "elements_truncated": bool}`` for Galaxy's element dicts."""
    summarizer = _Summarizer(encode, limit)
    summaries = summarizer.elements(elements)
    shown = limit - summarizer.left
    return {"elements": summaries, "elements_shown": shown, "elements_truncated": _count(elements) > shown}


class _Summarizer:
    """Summarises elements depth first until ``limit`` of them are listed."""

    def __init__(self, encode: Encode, limit: int):
        self.encode = encode
        self.left = limit

    def elements(self, elements: list[dict[str, Any]]) -> list[dict[str, Any]]:
        summaries = []
        for element in elements:
            if self.left <= 0:
                break
            self.left -= 1
            summaries.append(self.element(element))
        return summaries

    def element(self, element: dict[str, Any]) -> dict[str, Any]:
        item = element.get("object") or {}
        summary = {
            "identifier": element.get("element_identifier"),
            "element_type": element.get("element_type"),
            "id": self.encode(item["id"]) if item.get("id") is not None else None,
        }
        if element.get("element_type") == "dataset_collection":
            summary["state"] = item.get("populated_state")
            summary["collection_type"] = item.get("collection_type")
            summary["element_count"] = item.get("element_count")
            summary["elements"] = self.elements(item.get("elements") or [])
        else:
            summary["state"] = item.get("state")
        return summary


def _count(elements: list[dict[str, Any]]) -> int:
    """Elements at every level, as the summary counts them."""
    return sum(
        1 + _count((element.get("object") or {}).get("elements") or [])
        if element.get("element_type") == "dataset_collection"
        else 1
        for element in elements
    )
