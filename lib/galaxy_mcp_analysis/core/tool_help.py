"""A tool's help as plain text an agent can read: Galaxy writes tool help in reStructuredText.

docutils (a Galaxy dependency) parses it; this renderer keeps what carries meaning for a
reader with no HTML: headings, paragraphs, list markers and nesting, literal blocks, table rows
and definition lists. Roles, substitutions and directives docutils does not know are reported
by docutils as problems, which are silenced here: an agent gets the text around them.
"""

import re

import docutils.core
import docutils.nodes as rst

_SILENT = {"report_level": 5, "halt_level": 5, "warning_stream": False, "file_insertion_enabled": False,
           "raw_enabled": False}


def help_as_text(source: str) -> str:
    """``source`` (reStructuredText) as plain text; empty help gives ''."""
    if not source or not source.strip():
        return ""
    try:
        document = docutils.core.publish_doctree(source, settings_overrides=_SILENT)
    except Exception:  # docutils raises a variety of errors on broken markup; the source is readable too
        return source.strip() + "\n"
    lines: list[str] = []
    _blocks(document, lines, indent="")
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip() + "\n"  # one blank line between blocks


def _blocks(node: rst.Node, lines: list[str], indent: str) -> None:
    for child in node.children:
        _block(child, lines, indent)


def _block(node: rst.Node, lines: list[str], indent: str) -> None:  # noqa: C901 - one branch per node kind
    if isinstance(node, (rst.system_message, rst.comment, rst.substitution_definition, rst.target)):
        return
    if isinstance(node, rst.section):
        _blocks(node, lines, indent)
    elif isinstance(node, (rst.title, rst.rubric)):
        text = node.astext().strip()
        lines += ["", indent + text, indent + "-" * len(text), ""]
    elif isinstance(node, rst.paragraph):
        lines += [indent + _one_line(node), ""]
    elif isinstance(node, (rst.bullet_list, rst.enumerated_list)):
        for number, item in enumerate(node.children, start=1):
            _list_item(item, lines, indent, f"{number}. " if isinstance(node, rst.enumerated_list) else "- ")
        lines.append("")
    elif isinstance(node, (rst.literal_block, rst.doctest_block)):
        lines += [indent + "    " + line for line in node.astext().splitlines()] + [""]
    elif isinstance(node, rst.table):
        for row in node.findall(rst.row):
            lines.append(indent + " | ".join(_one_line(entry) for entry in row.children))
        lines.append("")
    elif isinstance(node, rst.definition_list):
        for item in node.children:
            terms = [_one_line(child) for child in item.children if isinstance(child, rst.term)]
            lines.append(indent + " ".join(terms))
            for child in item.children:
                if isinstance(child, rst.definition):
                    _blocks(child, lines, indent + "    ")
    elif isinstance(node, rst.transition):
        lines += [indent + "----", ""]
    elif isinstance(node, rst.Element) and node.children and not isinstance(node, rst.TextElement):
        _blocks(node, lines, indent)  # containers: block quotes, admonitions, field lists, ...
    elif text := node.astext().strip():
        lines += [indent + " ".join(text.split()), ""]


def _list_item(item: rst.Node, lines: list[str], indent: str, marker: str) -> None:
    nested: list[str] = []
    _blocks(item, nested, indent + " " * len(marker))
    body = list(nested)
    while body and not body[0].strip():
        body.pop(0)
    while body and not body[-1].strip():
        body.pop()
    if not body:
        return
    body[0] = indent + marker + body[0].lstrip()
    # Paragraphs inside one item stay together: drop the blank lines between an item's own lines.
    lines += [line for index, line in enumerate(body) if line.strip() or _next_is_nested(body, index, indent, marker)]


def _next_is_nested(body: list[str], index: int, indent: str, marker: str) -> bool:
    following = body[index + 1] if index + 1 < len(body) else ""
    return following.startswith(indent + " " * len(marker) + "    ")


def _one_line(node: rst.Node) -> str:
    return " ".join(node.astext().split())
