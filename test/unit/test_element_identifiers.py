"""core.element_identifiers: a create_collection request is judged whole before Galaxy sees it."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from galaxy_mcp_analysis.core.errors import InvalidInput
from galaxy_mcp_analysis.core.element_identifiers import (
    check_element_identifiers,
    PastedElement,
    with_dataset_ids,
    collection_ranks,
    ElementReference,
    InvalidElements,
    MAX_NESTING_LEVELS,
    MAX_REPORTED_PROBLEMS,
)


def references(*arguments, **keywords):
    """The existing items a request names (check_element_identifiers' references)."""
    return check_element_identifiers(*arguments, **keywords).references


def hda(name, id="d1"):
    return {"name": name, "src": "hda", "id": id}


def nested(name, collection_type, elements):
    return {"name": name, "src": "new_collection", "collection_type": collection_type, "element_identifiers": elements}


def pair(name, forward="f", reverse="r"):
    return nested(name, "paired", [hda("forward", forward), hda("reverse", reverse)])


def problems_of(collection_type, elements) -> str:
    with pytest.raises(InvalidElements) as raised:
        references(collection_type, elements)
    return str(raised.value)


# ---- collection_type ----


@pytest.mark.parametrize(
    ("collection_type", "ranks"),
    [
        ("list", ["list"]),
        ("paired", ["paired"]),
        ("paired_or_unpaired", ["paired_or_unpaired"]),
        ("list:paired", ["list", "paired"]),
        ("list:list:paired_or_unpaired", ["list", "list", "paired_or_unpaired"]),
    ],
)
def test_collection_types_are_split_into_ranks(collection_type, ranks):
    assert collection_ranks(collection_type) == ranks


@pytest.mark.parametrize(
    "collection_type", ["", None, 3, "lst", "list:", ":list", "list::paired", "record", "sample_sheet"]
)
def test_unknown_collection_types_name_the_allowed_ranks(collection_type):
    with pytest.raises(InvalidElements) as raised:
        collection_ranks(collection_type)
    assert "collection_type" in str(raised.value)
    assert "list" in str(raised.value)


def test_collection_type_longer_than_galaxys_column_is_refused():
    # Galaxy's column is 255 characters: PostgreSQL refuses longer values mid-creation, sqlite keeps them.
    longest = ":".join(["paired_or_unpaired"] * 13)  # 246 characters
    assert len(collection_ranks(longest)) == 13
    with pytest.raises(InvalidElements) as raised:
        collection_ranks(longest + ":paired_or_unpaired")
    assert "at most 255" in str(raised.value) and "fewer levels" in str(raised.value)


def test_more_nesting_levels_than_galaxy_lists_are_refused():
    # A 60-level list was created on sqlite, then every listing of its history failed with HTTP 500.
    deepest = ":".join(["list"] * MAX_NESTING_LEVELS)
    assert len(collection_ranks(deepest)) == MAX_NESTING_LEVELS
    with pytest.raises(InvalidElements) as raised:
        collection_ranks(deepest + ":list")
    assert f"at most {MAX_NESTING_LEVELS}" in str(raised.value) and "fewer levels" in str(raised.value)


def test_record_and_sample_sheet_point_to_the_rest_api():
    assert "REST API" in str(pytest.raises(InvalidElements, collection_ranks, "sample_sheet").value)


def test_errors_are_invalid_input_so_they_map_to_validation_error():
    assert issubclass(InvalidElements, InvalidInput)


# ---- valid shapes and the references they return ----


def test_a_list_returns_its_datasets_in_order_with_paths():
    refs = references("list", [hda("a", "x1"), hda("b", "x2"), {"name": "c", "src": "ldda", "id": "x3"}])
    assert refs == [
        ElementReference("element_identifiers[0]", "hda", "x1"),
        ElementReference("element_identifiers[1]", "hda", "x2"),
        ElementReference("element_identifiers[2]", "ldda", "x3"),
    ]


def test_an_empty_list_is_a_valid_list():
    assert references("list", []) == []


def test_paired_accepts_forward_and_reverse_in_any_order():
    assert len(references("paired", [hda("reverse"), hda("forward")])) == 2


@pytest.mark.parametrize("names", [["forward", "reverse"], ["unpaired"]])
def test_paired_or_unpaired_accepts_a_pair_or_one_unpaired(names):
    assert len(references("paired_or_unpaired", [hda(name) for name in names])) == len(names)


def test_list_paired_nests_new_collections_and_reports_leaf_paths():
    refs = references("list:paired", [pair("s1", "a", "b"), pair("s2", "c", "d")])
    assert [ref.path for ref in refs] == [
        "element_identifiers[0].element_identifiers[0]",
        "element_identifiers[0].element_identifiers[1]",
        "element_identifiers[1].element_identifiers[0]",
        "element_identifiers[1].element_identifiers[1]",
    ]
    assert [ref.id for ref in refs] == ["a", "b", "c", "d"]


def test_list_list_and_list_paired_or_unpaired():
    assert len(references("list:list", [nested("g1", "list", [hda("x"), hda("y")])])) == 2
    mixed = [
        nested("s1", "paired_or_unpaired", [hda("unpaired")]),
        nested("s2", "paired_or_unpaired", [hda("forward"), hda("reverse")]),
    ]
    assert len(references("list:paired_or_unpaired", mixed)) == 3


def test_three_levels_nest_their_collection_types():
    inner = nested("r1", "list:paired", [pair("p1")])
    refs = references("list:list:paired", [inner])
    assert refs[0].path == "element_identifiers[0].element_identifiers[0].element_identifiers[0]"


def test_an_existing_collection_can_stand_for_a_nested_level_and_carries_the_type_it_needs():
    refs = references("list:paired", [{"name": "s1", "src": "hdca", "id": "c1"}])
    assert refs == [ElementReference("element_identifiers[0]", "hdca", "c1", "paired")]


def test_tags_are_allowed_on_elements():
    assert references("list", [{**hda("a"), "tags": ["name:a"]}])


def test_element_tags_are_judged_by_the_adapters_rule_at_every_level():
    def is_tag(tag):
        return not tag.startswith(".")

    inner = nested("g1", "list", [{**hda("x"), "tags": ["../x", "qc"]}])
    with pytest.raises(InvalidElements) as raised:
        references("list:list", [{**inner, "tags": [".hidden"]}, nested("g2", "list", [hda("y")])], is_tag)
    message = str(raised.value)
    assert "element_identifiers[0]: tag(s) ['.hidden'] are not in Galaxy's tag form" in message
    assert "element_identifiers[0].element_identifiers[0]: tag(s) ['../x']" in message
    assert "['../x', 'qc']" not in message and "name:sample1" in message
    assert references("list", [{**hda("a"), "tags": ["qc"]}], is_tag)


@pytest.mark.parametrize("tags", ["qc", [1], None, ["ok", {"x": 1}]])
def test_element_tags_must_be_a_list_of_strings(tags):
    assert "'tags' must be a list of strings" in problems_of("list", [{**hda("a"), "tags": tags}])


# ---- each rule, with the path and the fix in the message ----


def test_duplicate_names_at_one_level_name_both_positions():
    message = problems_of("list", [hda("a"), hda("b"), hda("a")])
    assert "element_identifiers[2]: the name 'a' is already used by element 0" in message


def test_the_same_name_on_different_levels_or_branches_is_fine():
    references("list:paired", [pair("forward"), pair("reverse")])


def test_duplicate_names_inside_a_nested_level_are_found():
    message = problems_of("list:list", [nested("g", "list", [hda("x"), hda("x")])])
    assert "element_identifiers[0].element_identifiers[1]: the name 'x'" in message


@pytest.mark.parametrize(
    "names",
    [["forward"], ["reverse"], ["forward", "reverse", "extra"], ["left", "right"], ["forward", "unpaired"]],
)
def test_paired_needs_exactly_forward_and_reverse(names):
    message = problems_of("paired", [hda(name) for name in names])
    assert "element_identifiers: a paired level has exactly ['forward', 'reverse']" in message


@pytest.mark.parametrize("names", [["forward"], ["unpaired", "forward"], ["a"], ["forward", "reverse", "unpaired"], []])
def test_paired_or_unpaired_needs_a_pair_or_one_unpaired(names):
    message = problems_of("paired_or_unpaired", [hda(name) for name in names])
    assert "exactly ['forward', 'reverse'] or exactly ['unpaired']" in message


def test_a_bad_pair_inside_a_list_is_named_by_its_path():
    message = problems_of("list:paired", [pair("s1"), nested("s2", "paired", [hda("forward"), hda("rev")])])
    assert "element_identifiers[1].element_identifiers: a paired level has exactly" in message
    assert "got ['forward', 'rev']" in message


@pytest.mark.parametrize("name", [None, "", 5])
def test_names_must_be_non_empty_strings(name):
    message = problems_of("list", [{"name": name, "src": "hda", "id": "x"}])
    assert "element_identifiers[0]: needs a non-empty string 'name'" in message


def test_a_missing_name_is_one_problem_not_also_a_pairing_problem():
    message = problems_of("paired", [{"src": "hda", "id": "x"}, hda("reverse")])
    assert "needs a non-empty string 'name'" in message
    assert "paired level" not in message


def test_datasets_where_a_nested_level_is_needed_show_the_nested_shape():
    message = problems_of("list:paired", [hda("s1")])
    assert "element_identifiers[0]: src must be 'new_collection' (or 'hdca'" in message
    assert '"collection_type": "paired"' in message and '"name": "forward"' in message


def test_a_nested_collection_where_datasets_are_needed_is_refused():
    message = problems_of("list", [pair("s1")])
    assert "element_identifiers[0]: src must be 'hda' (history dataset), 'ldda' (library dataset) or 'pasted'" in (
        message
    )


def test_nesting_deeper_than_the_type_is_refused_at_the_leaf():
    message = problems_of("list:list", [nested("g", "list", [pair("p")])])
    assert "element_identifiers[0].element_identifiers[0]: src must be 'hda'" in message


@pytest.mark.parametrize("inner_type", ["list", "paired:list", "", None])
def test_a_new_collection_must_declare_the_rest_of_the_type(inner_type):
    element = {**pair("s1"), "collection_type": inner_type}
    message = problems_of("list:paired", [element])
    expected = "element_identifiers[0]: its collection_type must be 'paired' (the rest of the requested type)"
    assert f"{expected}, got {inner_type!r}" in message


def test_a_new_collection_needs_element_identifiers():
    message = problems_of("list:paired", [{"name": "s1", "src": "new_collection", "collection_type": "paired"}])
    assert "element_identifiers[0]: a 'new_collection' element needs 'element_identifiers'" in message


def test_a_new_collection_with_an_id_is_refused():
    message = problems_of("list:paired", [{**pair("s1"), "id": "x"}])
    assert "remove 'id'" in message


@pytest.mark.parametrize("src", ["dataset", "hdas", None, "library"])
def test_unknown_sources_are_refused(src):
    message = problems_of("list", [{"name": "a", "src": src, "id": "x"}])
    assert f"got {src!r}" in message


@pytest.mark.parametrize("element_id", [None, "", 17])
def test_datasets_need_a_string_id(element_id):
    message = problems_of("list", [{"name": "a", "src": "hda", "id": element_id}])
    assert "element_identifiers[0]: src 'hda' needs the item's encoded 'id' (a string)" in message


def test_nested_keys_on_a_dataset_are_refused():
    message = problems_of("list", [{**hda("a"), "element_identifiers": []}])
    assert "'element_identifiers' belongs only to src 'new_collection' elements" in message


def test_unknown_keys_are_refused_listing_the_allowed_ones():
    message = problems_of("list", [{**hda("a"), "identifier": "a"}])
    assert "element_identifiers[0]: unknown key(s) ['identifier']; allowed:" in message


@pytest.mark.parametrize("elements", [None, {"a": "x"}, "x"])
def test_element_identifiers_must_be_a_list(elements):
    assert "element_identifiers: must be a list of elements" in problems_of("list", elements)


def test_elements_must_be_objects():
    assert "element_identifiers[1]: must be an object like" in problems_of("list", [hda("a"), "x"])


def test_every_problem_is_reported_up_to_a_cap_and_nothing_is_said_created():
    message = problems_of("list", [{"name": "", "src": "hda", "id": "x"}] * (MAX_REPORTED_PROBLEMS + 5))
    assert message.count("needs a non-empty string 'name'") == MAX_REPORTED_PROBLEMS
    assert "... and 5 more problem(s)." in message
    assert "Nothing was created." in message


# ---- properties ----

NAMES = st.text(alphabet="abcxyz_0123", min_size=1, max_size=4)


@settings(max_examples=200, deadline=None)
@given(st.lists(NAMES, max_size=12))
def test_a_flat_list_is_valid_exactly_when_its_names_are_unique(names):
    elements = [hda(name, f"id{i}") for i, name in enumerate(names)]
    if len(set(names)) == len(names):
        refs = references("list", elements)
        assert [ref.id for ref in refs] == [f"id{i}" for i in range(len(names))]
    else:
        assert "is already used by element" in problems_of("list", elements)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["forward", "reverse", "unpaired", "other"]), max_size=4))
def test_pairing_rules_match_galaxys_accepted_name_sets(names):
    elements = [hda(name) for name in names]
    for collection_type, accepted in (
        ("paired", [{"forward", "reverse"}]),
        ("paired_or_unpaired", [{"forward", "reverse"}, {"unpaired"}]),
    ):
        valid = len(set(names)) == len(names) and set(names) in accepted
        if valid:
            references(collection_type, elements)
        else:
            with pytest.raises(InvalidElements):
                references(collection_type, elements)


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=1, max_value=4), st.integers(min_value=0, max_value=5))
def test_nesting_is_valid_only_at_the_depth_of_the_type(type_depth, element_depth):
    collection_type = ":".join(["list"] * type_depth)
    element = hda("leaf")
    for level in range(element_depth):
        element = nested(f"n{level}", ":".join(["list"] * (level + 1)), [element])
    if element_depth == type_depth - 1:
        assert len(references(collection_type, [element])) == 1
    else:
        with pytest.raises(InvalidElements):
            references(collection_type, [element])


@pytest.mark.parametrize("name", ["a\x00b", "n" * 256])
def test_names_galaxy_cannot_store_are_refused(name):
    element = {"name": name, "src": "hda", "id": "f2db41e1fa331b3e"}
    with pytest.raises(InvalidInput) as refused:
        references("list", [element])
    assert "element_identifiers[0]" in str(refused.value)
    references("list", [{**element, "name": "n" * 255}])


# ---- pasted elements: texts create_collection uploads itself ----


def pasted(name, content="a\tb\n", **more):
    return {"name": name, "src": "pasted", "content": content, **more}


def test_pasted_elements_are_returned_in_order_with_their_defaults():
    checked = check_element_identifiers(
        "list", [pasted("A"), pasted("B", "x\r\ny", file_type="tabular", dbkey="hg38")], max_paste_bytes=100
    )
    assert checked.references == []
    assert checked.pasted == [
        PastedElement("element_identifiers[0]", "A", "a\tb\n"),
        PastedElement("element_identifiers[1]", "B", "x\r\ny", "tabular", "hg38"),
    ]


def test_a_pasted_pair_and_a_nested_pasted_list_fit_their_types():
    pair_request = [pasted("reverse"), pasted("forward")]
    assert len(check_element_identifiers("paired", pair_request, max_paste_bytes=100).pasted) == 2
    nested_request = [nested("g1", "list", [pasted("x"), pasted("y")])]
    assert [p.path for p in check_element_identifiers("list:list", nested_request, max_paste_bytes=100).pasted] == [
        "element_identifiers[0].element_identifiers[0]",
        "element_identifiers[0].element_identifiers[1]",
    ]


@pytest.mark.parametrize(
    ("elements", "problem"),
    [
        ([pasted("A", "")], "element_identifiers[0]: content is empty"),
        ([pasted("A", "é" * 6)], "element_identifiers[0]: content is 12 bytes; the server accepts at most 10 bytes"),
        ([pasted("A", "x" * 6), pasted("B", "y" * 6)], "the pasted contents are 12 bytes together"),
        ([{"name": "A", "src": "pasted"}], "src 'pasted' needs the dataset's text as 'content'"),
        ([pasted("A", id="d1")], "unknown key(s) ['id']"),
        ([pasted("A", file_type="")], "'file_type' must be a non-empty string"),
        ([pasted("A", dbkey="hg\x0038")], "'dbkey' must be a non-empty string without NUL"),
        ([pasted("A"), pasted("A")], "the name 'A' is already used by element 0"),
        ([pasted("A"), hda("B")], "element_identifiers[1]: existing items cannot be mixed with src 'pasted'"),
        ([hda("a"), {"name": "b", "src": "hda", "id": "d1", "content": "x"}], "unknown key(s) ['content']"),
    ],
    ids=["empty", "over-cap", "total-over-cap", "no-content", "id", "file-type", "nul-dbkey", "duplicate", "mixed",
         "content-on-hda"],
)
def test_pasted_elements_are_refused_with_the_path_and_the_fix(elements, problem):
    with pytest.raises(InvalidElements) as raised:
        check_element_identifiers("list", elements, max_paste_bytes=10)
    assert problem in str(raised.value)
    assert "Nothing was created." in str(raised.value)


def test_pasted_is_refused_where_a_collection_is_expected_and_where_no_cap_is_given():
    assert "src must be 'new_collection'" in problems_of("list:list", [pasted("A")])
    assert "src 'pasted' is not accepted here" in problems_of("list", [pasted("A")])


def test_with_dataset_ids_replaces_each_pasted_element_in_order_keeping_name_and_tags():
    request = [nested("g1", "list", [pasted("x", tags=["name:x"]), pasted("y")]), nested("g2", "list", [pasted("z")])]
    assert with_dataset_ids(request, ["i1", "i2", "i3"]) == [
        nested("g1", "list", [{"name": "x", "tags": ["name:x"], "src": "hda", "id": "i1"},
                              {"name": "y", "src": "hda", "id": "i2"}]),
        nested("g2", "list", [{"name": "z", "src": "hda", "id": "i3"}]),
    ]
