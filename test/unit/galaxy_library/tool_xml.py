"""A tool written inline in a test, read by Galaxy's own tool source parser."""

from galaxy.tool_util.parser.factory import get_tool_source


def tool_source_of(tmp_path_factory, xml: str):
    path = tmp_path_factory.mktemp("tool") / "t.xml"
    path.write_text(xml)
    return get_tool_source(str(path))
