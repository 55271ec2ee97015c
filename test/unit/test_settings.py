import pytest

from galaxy_mcp_analysis.core.settings import (
    MIB,
    Settings,
    SettingsError,
)


def test_defaults():
    assert Settings.from_environ({}) == Settings(max_read_bytes=MIB, allow_unverified=False)


def test_values_from_the_environment():
    settings = Settings.from_environ(
        {"GALAXY_MCP_ANALYSIS_MAX_READ_BYTES": "4096", "GALAXY_MCP_ANALYSIS_ALLOW_UNVERIFIED": "yes"}
    )
    assert settings == Settings(max_read_bytes=4096, allow_unverified=True)


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("MAX_READ_BYTES", "lots", "is not an integer"),
        ("MAX_READ_BYTES", "0", "must be at least 1"),
        ("ALLOW_UNVERIFIED", "maybe", "is not a boolean"),
    ],
)
def test_bad_values_name_the_variable(variable, value, message):
    with pytest.raises(SettingsError, match=f"GALAXY_MCP_ANALYSIS_{variable}=.*{message}"):
        Settings.from_environ({f"GALAXY_MCP_ANALYSIS_{variable}": value})
