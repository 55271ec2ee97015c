"""Tags in the form Galaxy's API schema (``TagItem``) reads back.

Galaxy's tag handler stores tags its own API cannot serialize again: ``../x`` is stored as ``./../x``,
after which every REST listing of the history fails with HTTP 500 (found by the hostile-input test
through ``update_dataset``, then through ``create_collection``'s element tags). Every tool that
writes tags refuses those first, with this one rule.
"""

from galaxy.schema.schema import TagItem
from pydantic import (
    TypeAdapter,
    ValidationError,
)

from galaxy_mcp_analysis.core.managing import TAG_FORM

_TAG_ITEM = TypeAdapter(TagItem)
#: What an agent should write instead; the suggestion of every refusal.
TAG_FORM_HINT = f"Use {TAG_FORM}."


def is_galaxy_tag(tag: object) -> bool:
    """Whether Galaxy's API schema accepts ``tag`` (a string in its tag form)."""
    try:
        _TAG_ITEM.validate_python(tag)
    except ValidationError:
        return False
    return True
