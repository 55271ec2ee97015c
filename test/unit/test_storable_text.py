"""pages._check_storable: text PostgreSQL cannot store is refused before Galaxy writes (sqlite would store it)."""

import pytest

from galaxy_mcp_analysis.errors import (
    AnalysisError,
    ErrorCode,
)
from galaxy_mcp_analysis.pages import (
    _check_storable,
    MAX_SLUG_LENGTH,
)


@pytest.mark.parametrize("field", ["title", "content", "slug", "annotation"])
def test_a_nul_character_is_a_validation_error_naming_the_field(field):
    with pytest.raises(AnalysisError) as raised:
        _check_storable(**{field: "before\x00after"})
    assert raised.value.code is ErrorCode.VALIDATION_ERROR and raised.value.message.startswith(f"{field} contains")


def test_slugs_are_capped_and_ordinary_text_passes():
    _check_storable(title="ünïcode 🧬", content="# x\n\ttab\r\n", slug="s" * MAX_SLUG_LENGTH, annotation=None)
    with pytest.raises(AnalysisError) as raised:
        _check_storable(slug="s" * (MAX_SLUG_LENGTH + 1))
    assert f"at most {MAX_SLUG_LENGTH}" in raised.value.message
