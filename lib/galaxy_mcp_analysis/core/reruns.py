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
#: Pasted text a no_repair quotes (what was recorded instead of the file meant).
QUOTED_CONTENT = 200


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


def upload_remedy(sources: list[dict[str, Any]], history: str, binary_types: set[str],
                  fitting_type: str | None = None) -> dict[str, str]:
    """What can be done about a failed upload, from the sources its job recorded: ``repair``, a call that
    can succeed, or ``no_repair``, why none can. Galaxy does not rerun uploads, so the repair is the upload
    again; pasted text declared as a binary type (``binary_types``: e.g. text declared as BAM) cannot be
    made into that type by any file_type, so no call is offered as if it could."""
    source = sources[0] if len(sources) == 1 else {}
    declared = source.get("ext")
    if source.get("src") == "pasted" and declared in binary_types:
        content = source.get("paste_content", "")
        shown = repr(content[:QUOTED_CONTENT]) + ("..." if len(content) > QUOTED_CONTENT else "")
        remedy = {"no_repair": (
            f"The upload recorded {len(content)} characters of pasted text, {shown}, declared as {declared!r}, "
            f"a binary format: no file_type turns text into a {declared}, so no call here makes the file meant. "
            f"If a real {declared} file exists, only its owner has it; once you have it, upload_file_from_url. "
            "The failed dataset can stay as the record.")}
        if fitting_type:  # the text is usable as what it is (``fitting_type``: Galaxy's sniffers' verdict on it)
            text = repr(content) if len(content) <= MAX_REPAIR_CONTENT else "..."
            remedy["no_repair"] += f" To use the recorded text as what it is ({fitting_type}): recreate."
            remedy["recreate"] = (
                f"create_dataset_from_text(history_id={history!r}, content={text}, file_type={fitting_type!r}): the "
                f"recorded text as {fitting_type!r}, the type it fits; it is no {declared} and does not stand in "
                "for one.")
        return remedy
    if source.get("src") == "url":
        call = f"upload_file_from_url(history_id={history!r}, url={source['url']!r}, file_type=...)"
    elif source.get("src") == "pasted" and len(source.get("paste_content", "")) <= MAX_REPAIR_CONTENT:
        call = f"create_dataset_from_text(history_id={history!r}, content={source['paste_content']!r}, file_type=...)"
    else:
        call = f"create_dataset_from_text(history_id={history!r}, content=..., file_type=...)"
    return {"repair": (
        f"{call}: Galaxy does not rerun uploads. If the recorded source is the right data, upload it again with a "
        "file_type that fits it (failed_outputs has Galaxy's message); if the source itself is not the data "
        "meant, only its owner can supply the right file. The failed dataset can stay as the record.")}
