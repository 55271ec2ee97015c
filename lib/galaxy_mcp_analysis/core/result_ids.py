"""Ids in Galaxy's serialized objects that no tool takes, removed before an agent reads them.

Galaxy's views carry, beside an item's own ``id``, ids of the rows behind it: a history
dataset's ``dataset_id`` is the id of the file it shares with its copies, a history
collection's ``collection_id`` the id of the element list it shares with its copies. Encoded,
they look like every other id, and on a history with copies each is the valid id of *another*
item of the same user: passed back to a tool, it silently reads or maps over the wrong object.
The same holds for a collection element's own ``id`` and a nested collection's ``id``. A field
named ``dataset_id`` or ``collection_id`` must mean the history item tools take, so these are
dropped (doc/clients.md lists them).
"""

from typing import Any

#: Fields removed from an object of each kind: what tools would take under that name is another item.
INTERNAL_FIELDS: dict[str, frozenset[str]] = {
    "dataset": frozenset({"dataset_id"}),  # the shared file's id
    "collection": frozenset({"collection_id", "implicit_collection_jobs_id"}),  # shared element list; job group
    "element": frozenset({"id"}),  # the element row's id
    "nested_collection": frozenset({"id"}),  # a sub-collection is no history item
}

_KINDS = {
    ("history_content_type", "dataset"): "dataset",
    ("history_content_type", "dataset_collection"): "collection",
    ("model_class", "HistoryDatasetAssociation"): "dataset",
    ("model_class", "HistoryDatasetCollectionAssociation"): "collection",
    ("model_class", "DatasetCollectionElement"): "element",
    ("model_class", "DatasetCollection"): "nested_collection",
}


def kind_of(item: dict) -> str | None:
    """Which kind of Galaxy object a serialized dict is, from the markers Galaxy's views write."""
    for marker in ("model_class", "history_content_type"):
        if (kind := _KINDS.get((marker, item.get(marker)))) is not None:
            return kind
    return None


def without_internal_ids(value: Any) -> Any:
    """A copy of ``value`` with every internal id of ``INTERNAL_FIELDS`` removed, at any depth.

    A collection's ``job_source_id`` stays only when it names a job (``job_source_type`` "Job");
    for a map-over it is the id of Galaxy's group of jobs, which no tool takes."""
    if isinstance(value, list):
        return [without_internal_ids(item) for item in value]
    if not isinstance(value, dict):
        return value
    drop = INTERNAL_FIELDS.get(kind_of(value) or "", frozenset())
    if value.get("job_source_type") not in (None, "Job"):
        drop = drop | {"job_source_id"}
    return {key: without_internal_ids(item) for key, item in value.items() if key not in drop}
