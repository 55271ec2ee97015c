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


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("OAUTH_ACCESS_TOKEN_SECONDS", "5", r"must be from 10 to 86400 \(seconds\)"),
        ("OAUTH_ACCESS_TOKEN_SECONDS", "86401", r"must be from 10 to 86400 \(seconds\)"),
        ("OAUTH_CODE_SECONDS", "3600", r"must be from 10 to 600 \(seconds\)"),
        ("OAUTH_CONSENT_SECONDS", "an hour", "is not an integer"),
    ],
)
def test_sign_in_lifetimes_are_bounded(variable, value, message):
    with pytest.raises(SettingsError, match=f"GALAXY_MCP_ANALYSIS_{variable}='{value}' {message}"):
        Settings.from_environ({f"GALAXY_MCP_ANALYSIS_{variable}": value})


def test_a_refresh_token_never_lives_shorter_than_an_access_token():
    settings = Settings.from_environ({"GALAXY_MCP_ANALYSIS_OAUTH_ACCESS_TOKEN_SECONDS": "600",
                                      "GALAXY_MCP_ANALYSIS_OAUTH_REFRESH_TOKEN_SECONDS": "600"})
    assert (settings.oauth_access_token_seconds, settings.oauth_refresh_token_seconds) == (600, 600)
    refused = r"OAUTH_REFRESH_TOKEN_SECONDS \(599\) must be at least .*ACCESS_TOKEN_SECONDS \(600\)"
    with pytest.raises(SettingsError, match=refused):
        Settings.from_environ({"GALAXY_MCP_ANALYSIS_OAUTH_ACCESS_TOKEN_SECONDS": "600",
                               "GALAXY_MCP_ANALYSIS_OAUTH_REFRESH_TOKEN_SECONDS": "599"})


def test_lifetimes_come_from_galaxy_yml_unless_a_variable_sets_them():
    options = {"mcp_analysis_oauth_access_token_seconds": 120, "mcp_analysis_oauth_code_seconds": "60",
               "mcp_analysis_max_read_bytes": 5}  # not a galaxy.yml setting: ignored
    environ = {"GALAXY_MCP_ANALYSIS_OAUTH_CODE_SECONDS": "30"}
    settings = Settings.from_environ(environ).with_galaxy_yml(options, environ)
    assert settings.oauth_access_token_seconds == 120
    assert settings.oauth_code_seconds == 30  # the variable wins
    assert settings.max_read_bytes == MIB
    assert Settings().with_galaxy_yml({}, {}) == Settings()
    with pytest.raises(SettingsError, match=r"galaxy.yml mcp_analysis_oauth_access_token_seconds='1' must be from 10"):
        Settings().with_galaxy_yml({"mcp_analysis_oauth_access_token_seconds": 1}, {})
