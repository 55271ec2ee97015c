"""The reference-data files a fresh Galaxy looks for at start-up, written empty into DATA_DIR.

Galaxy from PyPI has no ``tool-data`` directory. Without these files a fresh start logs about 30
ERROR lines and a traceback (issue 39): the genome builds list (``builds.txt``), ``twobit.loc``,
and, for the display applications of Galaxy's datatypes (UCSC, IGV, Ensembl, iobio, ...), the
build-site files their ``site_type`` names and the data tables their ``from_data_table`` names.
Each is given here with no entries, so every feature loads and offers no link or build until an
admin adds reference data (doc/admin-guide.md). The names are read from the display
applications of the Galaxy installed, so another release's additions are covered too.
"""

import xml.etree.ElementTree as ET
from pathlib import Path
from xml.sax.saxutils import quoteattr

import yaml

TOOL_DATA_DIR = "tool-data"
BUILD_SITES_FILE = "build_sites.yml"
#: Galaxy's builds.txt lists "?" first: the "unspecified" genome build every dataset starts with.
BUILDS = "?\tunspecified (?)\n"


def display_application_needs(configs: Path | None = None) -> tuple[list[str], list[str]]:
    """The build-site types and the data tables that the installed Galaxy's display applications read."""
    if configs is None:
        import galaxy.datatypes

        configs = Path(galaxy.datatypes.__file__).parent / "display_applications" / "configs"
    site_types, tables = set(), set()
    for path in configs.rglob("*.xml"):
        for links in ET.parse(path).getroot().iter("dynamic_links"):
            site_types.update(filter(None, [links.get("site_type")]))
            tables.update(filter(None, [links.get("from_data_table")]))
    return sorted(site_types), sorted(tables)


def settings(data_dir: Path) -> dict:
    """The Galaxy settings that name the files ``write`` makes (builds.txt is found in tool_data_path)."""
    return {"tool_data_path": str(data_dir / TOOL_DATA_DIR), "build_sites_config_file": str(data_dir / BUILD_SITES_FILE)}


def write(data_dir: Path) -> str:
    """Write the empty reference data; returns the display applications' data tables as XML
    ``<table>`` elements, for the data table file that serve/galaxy_config.py writes."""
    tool_data = data_dir / TOOL_DATA_DIR
    (tool_data / "shared" / "ucsc").mkdir(parents=True, exist_ok=True)
    (tool_data / "shared" / "ucsc" / "builds.txt").write_text(BUILDS)
    (tool_data / "twobit.loc").touch()
    site_types, tables = display_application_needs()
    sites = [{"type": site, "file": str(tool_data / "shared" / f"{site}_build_sites.txt")} for site in site_types]
    for site in sites:
        Path(site["file"]).touch()
    (data_dir / BUILD_SITES_FILE).write_text(yaml.safe_dump(sites, sort_keys=False))
    for table in tables:
        (tool_data / f"{table}.loc").touch()
    return "".join(_table_xml(table, tool_data / f"{table}.loc") for table in tables)


def _table_xml(name: str, loc: Path) -> str:
    # value and name: the columns every display application's dynamic_links reads (id="value" name="name"),
    # url: the one their <url> templates use.
    return (f"  <table name={quoteattr(name)} comment_char=\"#\" allow_duplicate_entries=\"False\">\n"
            f"    <columns>value, name, url</columns>\n    <file path={quoteattr(str(loc))} />\n  </table>\n")
