"""core.column_names: a pasted table's column names, from a list or its first line."""

import pytest

from galaxy_mcp_analysis.core.column_names import (
    column_header,
    ColumnHeader,
)
from galaxy_mcp_analysis.core.element_identifiers import (
    check_element_identifiers,
    InvalidElements,
)


def test_nothing_asked_is_nothing():
    assert column_header("a\tb\n", None, False) is None


def test_a_header_line_gives_the_names_and_is_one_header_line():
    assert column_header("gene\tcount\nmecA\t3\n", None, True) == ColumnHeader(["gene", "count"], 1)
    assert column_header("#gene\t count \r\nmecA\t3\n", None, True) == ColumnHeader(["gene", "count"], 1)


def test_given_names_win_over_the_header_line_which_still_is_no_data():
    assert column_header("g\tc\nmecA\t3\n", ["gene", "count"], True) == ColumnHeader(["gene", "count"], 1)
    assert column_header("mecA\t3\n", ["gene", "count"], False) == ColumnHeader(["gene", "count"], 0)


@pytest.mark.parametrize("content, names, header, says", [
    ("\nx\n", None, True, "first line is empty"),
    ("#\nx\n", None, True, "first line is empty"),
    ("a\n", [], False, "non-empty list"),
    ("a\n", "gene", False, "non-empty list"),
    ("a\n", ["gene", 3], False, "column_names[1]"),
    ("a\n", ["ge\tne"], False, "without tabs"),
    ("a\tb\tc\n", None, True, None),
    ("a\t\tc\n", None, True, "column_names[1]"),
])
def test_wrong_names_say_what_is_wrong(content, names, header, says):
    if says is None:
        assert column_header(content, names, header).names == ["a", "b", "c"]
        return
    with pytest.raises(ValueError, match=None) as refused:
        column_header(content, names, header)
    assert says in str(refused.value)


def test_pasted_elements_carry_their_header_and_a_wrong_one_is_a_shape_problem():
    checked = check_element_identifiers("list", [
        {"name": "A", "src": "pasted", "content": "g\tn\nx\t1\n", "header": True},
        {"name": "B", "src": "pasted", "content": "x\t1\n", "column_names": ["g", "n"]},
        {"name": "C", "src": "pasted", "content": "x\t1\n"},
    ], lambda tag: True, 1024)
    assert [element.header for element in checked.pasted] == [
        ColumnHeader(["g", "n"], 1), ColumnHeader(["g", "n"], 0), None]
    with pytest.raises(InvalidElements) as refused:
        check_element_identifiers("list", [{"name": "A", "src": "pasted", "content": "x\n", "header": "yes"},
                                           {"name": "B", "src": "pasted", "content": "x\n", "column_names": [""]}],
                                  lambda tag: True, 1024)
    assert "element_identifiers[0]: 'header' must be true or false" in str(refused.value)
    assert "element_identifiers[1]: column_names[0]" in str(refused.value)
