"""Galaxy's collection-type rule for an input, in one place: run_tool's preflight and the workflow checks use it."""

from galaxy.model.dataset_collections.type_description import COLLECTION_TYPE_DESCRIPTION_FACTORY


def collection_verdict(given_type: str, accepted_type: str) -> str:
    """``accept`` | ``map_over`` | ``refuse``, by Galaxy's collection-type descriptions: the input takes the
    collection directly, or Galaxy maps the collection over the input's type (its subcollections), or neither."""
    accepted = COLLECTION_TYPE_DESCRIPTION_FACTORY.for_collection_type(accepted_type)
    given = COLLECTION_TYPE_DESCRIPTION_FACTORY.for_collection_type(given_type)
    if accepted.accepts(given):
        return "accept"
    if given.can_map_over(accepted):
        return "map_over"
    return "refuse"
