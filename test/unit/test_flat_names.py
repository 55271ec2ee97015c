"""Galaxy's flat parameter names (core.flat_names), the one style of every flat name the patch set makes."""

from galaxy_mcp_analysis.core.flat_names import (
    flat_name,
    path_name,
    REPEAT_KEY,
    repeat_block,
)


def test_names_are_galaxys_flat_names():
    assert flat_name("", "input") == "input"
    assert flat_name("cond", "param") == "cond|param"
    assert flat_name(flat_name("", repeat_block("queries", 0)), "input2") == "queries_0|input2"
    assert repeat_block("queries") == "queries_<index>"


def test_a_path_names_each_repeat_block_by_the_placeholder():
    assert path_name(("queries", "input2"), frozenset({0})) == "queries_<index>|input2"
    assert path_name(("outer", "cond", "inner", "x"), frozenset({0, 2})) == "outer_<index>|cond|inner_<index>|x"
    assert path_name(("input",)) == "input"


def test_a_repeat_block_is_read_back():
    match = REPEAT_KEY.fullmatch(repeat_block("column_set", 12))
    assert match and (match.group(1), match.group(2)) == ("column_set", "12")
    assert REPEAT_KEY.fullmatch("plain") is None
