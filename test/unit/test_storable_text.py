"""storable.check_storable: text PostgreSQL cannot store is refused before Galaxy writes (sqlite would store it)."""

import pytest

from galaxy_mcp_analysis.mcp.errors import (
    AnalysisError,
    ErrorCode,
)
from galaxy_mcp_analysis.core.storable import (
    check_storable,
    MAX_ANNOTATION_BYTES,
    MAX_SLUG_LENGTH,
)


@pytest.mark.parametrize("field", ["title", "content", "slug", "annotation"])
def test_a_nul_character_is_a_validation_error_naming_the_field(field):
    with pytest.raises(AnalysisError) as raised:
        check_storable(**{field: "before\x00after"})
    assert raised.value.code is ErrorCode.VALIDATION_ERROR and raised.value.message.startswith(f"{field} contains")


def test_slugs_are_capped_and_ordinary_text_passes():
    check_storable(title="ünïcode 🧬", content="# x\n\ttab\r\n", slug="s" * MAX_SLUG_LENGTH, annotation=None)
    with pytest.raises(AnalysisError) as raised:
        check_storable(slug="s" * (MAX_SLUG_LENGTH + 1))
    assert f"at most {MAX_SLUG_LENGTH}" in raised.value.message


def test_annotations_are_capped_in_bytes():
    check_storable(annotation="a" * MAX_ANNOTATION_BYTES)
    with pytest.raises(AnalysisError) as raised:
        check_storable(annotation="é" * MAX_ANNOTATION_BYTES)
    assert f"at most {MAX_ANNOTATION_BYTES} bytes" in raised.value.message
