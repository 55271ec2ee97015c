"""core.tool_help: reStructuredText tool help as plain text."""

from galaxy_mcp_analysis.core.tool_help import help_as_text

HELP = """
.. class:: infomark

**TIP:** Use *Convert* first.

-----

Syntax
======

- **\\\\d** matches a digit.
- **{n}** repeats:

  - exactly n times.

1. first
2. second

::

  a  b
  c  d

=====  =====
col    value
=====  =====
x      1
=====  =====

term
    its meaning

Unknown :some-role:`text` and |undefined| stay readable.
"""


def test_structure_is_kept_and_markup_dropped():
    text = help_as_text(HELP)
    assert text.startswith("TIP: Use Convert first.\n"), text
    assert "\nSyntax\n------\n" in text, text
    assert "- \\d matches a digit.\n- {n} repeats:\n  - exactly n times.\n" in text, text
    assert "1. first\n2. second\n" in text, text
    assert "    a  b\n    c  d\n" in text, text
    assert "col | value\nx | 1\n" in text, text
    assert "term\n    its meaning\n" in text, text
    assert "Unknown" in text and "stay readable." in text, text
    assert "**" not in text and ".. class" not in text


def test_empty_help_is_empty_text():
    assert help_as_text("") == "" and help_as_text("  \n") == ""
