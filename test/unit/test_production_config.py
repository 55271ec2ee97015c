"""The admin guide's "Running at scale" galaxy.yml is the one test_production_deployment.py runs."""

import re
from pathlib import Path

import yaml

from galaxy_mcp_analysis.serve import galaxy_config

GUIDE = Path(__file__).resolve().parents[2] / "doc" / "admin-guide.md"


def documented_config() -> dict:
    section = GUIDE.read_text().split("## Running at scale", 1)[1]
    return yaml.safe_load(re.search(r"```yaml\n(.*?)```", section, re.S)[1])


def test_the_documented_gravity_section_is_the_tested_one():
    assert documented_config()["gravity"] == galaxy_config.gravity_section(port=8080, virtualenv="/srv/galaxy/.venv")


def test_the_patch_set_line_is_the_only_patch_set_setting():
    gravity = galaxy_config.gravity_section(port=8080, virtualenv="/venv")
    mentions = [path for path, value in _leaves(gravity) if "galaxy_mcp_analysis" in str(value)]
    assert mentions == [("gunicorn", "extra_args")]
    assert gravity["gunicorn"]["extra_args"] == "--worker-class galaxy_mcp_analysis.worker.Worker"


def test_the_documented_galaxy_settings_are_the_tested_ones(tmp_path):
    tested = galaxy_config.production_settings(
        tmp_path, broker_url="redis://:<password>@127.0.0.1:6379/0",
        database_url="postgresql://galaxy:<password>@127.0.0.1:5432/galaxy",
        galaxy_url="http://127.0.0.1:8080", id_secret="s", admin_api_key="k",
    )
    documented = documented_config()["galaxy"]
    assert documented == {key: tested[key] for key in documented}


def test_the_data_tables_beside_an_admins_tool_configuration_are_loaded_and_only_then(tmp_path):
    """make serve TOOL_CONF=dir/tool_conf.xml loads dir/tool_data_table_conf.xml too (test/corpus has one)."""
    corpus = Path(__file__).resolve().parents[1] / "corpus" / "tool_conf.xml"
    settings = dict(galaxy_url="http://127.0.0.1:8080", id_secret="s", admin_api_key="k", database_url=None)
    served = galaxy_config.galaxy_settings(tmp_path, tool_confs=[str(corpus)], **settings)
    assert served["tool_data_table_config_path"].split(",") == [
        str(tmp_path / "tool_data_table_conf.xml"), str(corpus.parent / "tool_data_table_conf.xml")]
    assert galaxy_config.galaxy_settings(tmp_path, **settings)["tool_data_table_config_path"] == str(
        tmp_path / "tool_data_table_conf.xml")


def _leaves(value, path=()):
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, (*path, key))
    else:
        yield path, value
