"""Where a rerun's outputs go when they replace a failed job's (``rerun_job(replace_outputs=true)``).

Each new output takes the place of the failed output of the same name: its name, its hid and its
visibility (a failed output hidden inside a collection stays hidden, the collection shows it; a
visible one is replaced by a visible one). The failed output is hidden. A new output with no failed
counterpart (the tool makes other outputs now) keeps where Galaxy put it and is named in the result.
"""

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class OutputPlace:
    """Where one output dataset of a job sits in its history (``dataset`` is Galaxy's decoded HDA id)."""

    output_name: str
    dataset: int
    hid: int | None
    name: str | None
    visible: bool


@dataclass(frozen=True)
class Placement:
    """The new output ``dataset`` takes ``place`` (the failed output's name, hid and visibility)."""

    dataset: int
    place: OutputPlace


def placements(failed: list[OutputPlace], new: list[OutputPlace]) -> tuple[list[Placement], list[str]]:
    """Each new output paired with the failed output of its name; the names of new outputs with none."""
    by_name = {place.output_name: place for place in failed}
    paired = [Placement(output.dataset, by_name[output.output_name]) for output in new if output.output_name in by_name]
    unpaired = sorted(output.output_name for output in new if output.output_name not in by_name)
    return paired, unpaired


#: Pasted text a repair repeats in full; longer text is the agent's to supply again.
MAX_REPAIR_CONTENT = 2000


def upload_sources(request) -> list[dict[str, Any]]:
    """The pasted texts and urls of an upload's recorded fetch request (``request_json``), nothing else
    (a server path or staged file is no source an agent can give again)."""
    if isinstance(request, str):
        try:
            request = json.loads(request)
        except ValueError:
            return []
    sources = []
    pending = list((request or {}).get("targets") or []) if isinstance(request, dict) else []
    while pending:
        item = pending.pop(0)
        if not isinstance(item, dict):
            continue
        pending.extend(item.get("elements") or item.get("items") or [])
        if item.get("src") in ("pasted", "url"):
            sources.append({key: item[key] for key in ("src", "url", "paste_content", "ext") if key in item})
    return sources
