"""serve/tool_data.py gives a fresh Galaxy every reference-data file it looks for at start-up, empty
(the start-up itself: test_web_ui.py::test_a_fresh_start_prints_no_error_and_no_traceback)."""

import xml.etree.ElementTree as ET

import yaml

from galaxy_mcp_analysis.serve import galaxy_config, tool_data


def test_every_display_application_finds_its_build_sites_and_data_tables(tmp_path):
    site_types, tables = tool_data.display_application_needs()
    # Galaxy 26.1's display applications: UCSC, IGV, Ensembl, GBrowse, RViewer sites; iobio, iCn3D, ... tables.
    assert {"ucsc", "igv", "ensembl"} <= set(site_types) and {"bam_iobio", "igv_broad_genomes"} <= set(tables)
    settings = galaxy_config.galaxy_settings(tmp_path, galaxy_url="http://127.0.0.1:8080", id_secret="s",
                                             admin_api_key="k", database_url=None)
    galaxy_config.write(tmp_path, galaxy_url="http://127.0.0.1:8080", id_secret="s", admin_api_key="k",
                        database_url=None)

    sites = yaml.safe_load(open(settings["build_sites_config_file"]))
    assert sorted(site["type"] for site in sites) == site_types
    assert all(open(site["file"]).read() == "" for site in sites)
    defined = ET.parse(tmp_path / galaxy_config.DATA_TABLES_FILE).getroot().findall("table")
    assert sorted(table.get("name") for table in defined) == tables
    for table in defined:
        assert table.findtext("columns") == "value, name, url"
        assert open(table.find("file").get("path")).read() == ""


def test_the_genome_builds_and_twobit_files_are_where_galaxy_reads_them(tmp_path):
    settings = galaxy_config.galaxy_settings(tmp_path, galaxy_url="http://127.0.0.1:8080", id_secret="s",
                                             admin_api_key="k", database_url=None)
    tool_data.write(tmp_path)
    from galaxy.managers.dbkeys import read_dbnames

    # Galaxy resolves builds_file_path (default shared/ucsc/builds.txt) against tool_data_path.
    builds = tmp_path / "tool-data" / "shared" / "ucsc" / "builds.txt"
    assert settings["tool_data_path"] == str(tmp_path / "tool-data")
    assert read_dbnames(str(builds)) == [("?", "unspecified (?)")]
    assert (tmp_path / "tool-data" / "twobit.loc").read_text() == ""
