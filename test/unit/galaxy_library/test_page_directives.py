import pytest
from galaxy.managers import markdown_parse
from hypothesis import given, settings
from hypothesis import strategies as st

from galaxy_mcp_analysis.operations import page_directives
from galaxy_mcp_analysis.operations.page_directives import (
    GENERAL_RULES,
    DirectiveProblem,
    PageContentError,
    diagnose,
    validate,
)

PROPERTY = settings(max_examples=300, deadline=None)


def galaxy_accepts(content) -> bool:
    try:
        markdown_parse.validate_galaxy_markdown(content, internal=True)
    except Exception:
        return False
    return True


def fence(*lines: str) -> str:
    return "\n".join(["```galaxy", *lines, "```"]) + "\n"


def only_problem(content: str) -> dict:
    assert not galaxy_accepts(content)  # every explained case is a real rejection
    problems = diagnose(content)
    assert len(problems) == 1, problems
    return problems[0].as_dict()


def problem(line, rule, message, suggestion, directive=None, argument=None) -> dict:
    return DirectiveProblem(line, directive, argument, rule, message, suggestion).as_dict()


TABLE_ARGUMENTS = (
    "compact, footer, hid, history_dataset_id, input, invocation_id, output, path, show_column_headers, title, collapse"
)

# --- documents Galaxy accepts ------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        "",
        "# Report\n\nPlain text with `code`.\n",
        fence('history_dataset_as_table(history_dataset_id=abc123, title="My title", compact=true)'),
        fence("visualization(anything=goes, visualization_id=scatter)"),  # dynamic arguments: any name
        fence("generate_time() trailing text is ignored by Galaxy"),
        fence("generate_time(collapse='Click to show')"),  # shared argument
        "```galaxy\n```\n",  # an empty fence is fine
        "```galaxy\ngenerate_time()\n```python\nnot_a_directive\n",  # any ``` line closes a galaxy fence
        "Made ${galaxy generate_time()} and ${galaxy history_dataset_name(hid=3)}.\n",
        "Unclosed ${galaxy history_dataset_name(history_dataset_id=abc\n",  # no '}' later: Galaxy ignores it
        "```python\n${galaxy nonsense(}\n```\n    ${galaxy indented_code(}\n",
    ],
)
def test_accepted_documents_have_no_problems(content):
    assert galaxy_accepts(content)
    assert diagnose(content) == []
    validate(content)


# --- one test per diagnostic, every field --------------------------------------------------------


def test_unquoted_value_with_spaces_is_quoted_in_the_corrected_line():
    content = "# Results\n\n" + fence("history_dataset_as_table(history_dataset_id=abc123, title=My title)")
    assert only_problem(content) == problem(
        4, "unquoted_value_with_spaces",
        'The value of title contains spaces, so it must be quoted: title="My title".',
        'history_dataset_as_table(history_dataset_id=abc123, title="My title")',
        directive="history_dataset_as_table", argument="title",
    )


def test_value_with_a_double_quote_inside_is_single_quoted():
    content = fence('history_dataset_as_table(history_dataset_id=abc123, title=the "best" run)')
    assert only_problem(content)["suggestion"] == (
        "history_dataset_as_table(history_dataset_id=abc123, title='the \"best\" run')"
    )


def test_unquoted_value_with_symbols():
    assert only_problem(fence("history_dataset_as_image(history_dataset_id=abc123, path=plots/a.png)")) == problem(
        2, "unquoted_value_with_symbols",
        "The value of path contains characters other than letters, digits, '_' and '-', so it must be quoted: "
        'path="plots/a.png".',
        'history_dataset_as_image(history_dataset_id=abc123, path="plots/a.png")',
        directive="history_dataset_as_image", argument="path",
    )


def test_bad_quoting_and_empty_value():
    assert only_problem(fence('history_dataset_as_table(history_dataset_id=abc123, title="My title)')) == problem(
        2, "bad_quoting", 'The value of title has unbalanced or mixed quotes: title="My title".',
        'history_dataset_as_table(history_dataset_id=abc123, title="My title")',
        directive="history_dataset_as_table", argument="title",
    )
    assert only_problem(fence('history_dataset_as_table(history_dataset_id=abc123, title="")')) == problem(
        2, "empty_value", "title has an empty value; give it a value or drop the argument.",
        "history_dataset_as_table(history_dataset_id=abc123)", directive="history_dataset_as_table", argument="title",
    )


def test_two_directives_in_one_fence_are_split_into_fences():
    content = fence("history_dataset_display(history_dataset_id=abc123)", "generate_time()")
    assert only_problem(content) == problem(
        3, "one_directive_per_fence",
        "A ```galaxy fence holds exactly one directive, but the one opened on line 1 has 2 "
        "(history_dataset_display, generate_time). Give each directive its own fence.",
        "```galaxy\nhistory_dataset_display(history_dataset_id=abc123)\n```\n```galaxy\ngenerate_time()\n```",
        directive="generate_time",
    )


def test_split_suggestion_uses_corrected_directives():
    problems = diagnose(fence("generate_time()", "history_link(history_id=a b)", "generate_galaxy_version()"))
    assert [p.rule for p in problems] == ["unquoted_value_with_spaces", "one_directive_per_fence"]
    assert problems[1].line == 3
    assert problems[1].suggestion == "\n".join(
        f"```galaxy\n{call}\n```" for call in ("generate_time()", 'history_link(history_id="a b")',
                                               "generate_galaxy_version()")
    )


def test_unknown_directive_suggests_closest_names():
    assert only_problem(fence("history_dataset_as_tabel(history_dataset_id=abc123)")) == problem(
        2, "unknown_directive",
        "Unknown directive 'history_dataset_as_tabel'; closest valid names: history_dataset_as_table, "
        "history_dataset_as_image, history_dataset_type.",
        "history_dataset_as_table(history_dataset_id=abc123)", directive="history_dataset_as_tabel",
    )


def test_unknown_directive_without_close_match_lists_all_names():
    found = only_problem(fence("frobnicate()"))
    assert found["rule"] == "unknown_directive" and found["directive"] == "frobnicate" and found["line"] == 2
    assert found["argument"] is None
    assert found["message"] == "Unknown directive 'frobnicate'; valid names: " + ", ".join(
        markdown_parse.VALID_ARGUMENTS) + "."
    assert found["suggestion"] == "Replace 'frobnicate' with one of the valid names."


def test_unknown_argument_lists_valid_arguments_and_suggests_closest():
    assert only_problem(fence("history_dataset_as_table(history_dataset_idd=abc123)")) == problem(
        2, "unknown_argument",
        f"history_dataset_as_table has no argument 'history_dataset_idd'; valid arguments of "
        f"history_dataset_as_table: {TABLE_ARGUMENTS}. Did you mean 'history_dataset_id'?",
        "history_dataset_as_table(history_dataset_id=abc123)",
        directive="history_dataset_as_table", argument="history_dataset_idd",
    )


def test_argument_to_a_directive_without_arguments_is_dropped():
    assert only_problem(fence("generate_time(format=iso)")) == problem(
        2, "unknown_argument", "generate_time has no argument 'format'; valid arguments of generate_time: collapse.",
        "generate_time()", directive="generate_time", argument="format",
    )


def test_malformed_arguments():
    assert only_problem(fence("history_link(history_id=abc,)")) == problem(
        2, "malformed_argument",
        "There is an empty argument (stray comma); valid arguments of history_link: history_id, invocation_id, "
        "collapse.", "history_link(history_id=abc)", directive="history_link",
    )
    assert only_problem(fence("history_dataset_name(abc123)"))["message"].startswith(
        "'abc123' is not written as name=value; valid arguments of history_dataset_name: hid,"
    )


def test_missing_parentheses():
    assert only_problem(fence("generate_time")) == problem(
        2, "missing_parentheses",
        "A directive is a call: write generate_time(...) with parentheses, even without arguments.",
        "generate_time()", directive="generate_time",
    )
    assert only_problem(fence("history_link(history_id=abc")) == problem(
        2, "missing_parentheses", "The call to history_link is missing its closing ')'.",
        "history_link(history_id=abc)", directive="history_link",
    )


def test_unclosed_fence_at_end_of_document():
    content = "Intro\n```galaxy\ngenerate_time()\n"
    assert only_problem(content) == problem(
        2, "unclosed_fence", "The ```galaxy fence opened on line 2 is never closed.",
        "Insert a line containing only ``` after line 3.",
    )
    assert only_problem("```galaxy")["line"] == 1  # Galaxy itself numbers this one from 0


def test_unclosed_fence_swallowing_text_is_reported_at_the_fence():
    content = "```galaxy\ngenerate_time()\n\nSome prose here.\n\n```python\nprint(1)\n```\n"
    assert only_problem(content) == problem(
        1, "unclosed_fence",
        "The ```galaxy fence opened on line 1 is not closed before line 3, so the lines after it are read as "
        "Galaxy directives.",
        "Insert a line containing only ``` after line 2.",
    )


def test_blank_line_and_text_inside_a_closed_fence():
    assert only_problem(fence("generate_time()", "")) == problem(
        3, "blank_line_in_fence", "Blank lines are not allowed inside a ```galaxy fence.",
        "Delete line 3; the fence holds only its directive line.",
    )
    assert only_problem(fence("Some prose here.")) == problem(
        2, "text_in_fence",
        "A ```galaxy fence may only contain one directive call such as name(arg=value); move other text out of it.",
        "Move line 2 below the closing ```.", argument="Some prose here.",
    )
    assert only_problem(fence("${galaxy history_dataset_name(hid=3)}")) == problem(
        2, "text_in_fence",
        "A ```galaxy fence may only contain one directive call such as name(arg=value); write the directive "
        "without the ${galaxy ...} wrapper.",
        "history_dataset_name(hid=3)", argument="${galaxy history_dataset_name(hid=3)}",
    )


def test_embed_missing_closing_brace():
    assert only_problem("See ${galaxy history_dataset_name(hid=3) and {x}.\n") == problem(
        1, "malformed_embed", "An inline embed must end with '}' right after the directive's closing ')'.",
        "See ${galaxy history_dataset_name(hid=3)} and {x}.", directive="history_dataset_name",
    )


def test_embed_missing_closing_parenthesis():
    assert only_problem("Name: ${galaxy history_dataset_name(hid=3}\n") == problem(
        1, "malformed_embed", "The call to history_dataset_name is missing its closing ')'.",
        "Name: ${galaxy history_dataset_name(hid=3)}", directive="history_dataset_name",
    )


def test_embed_unknown_directive_and_unquoted_value():
    assert only_problem("x ${galaxy history_dataset_nme(hid=3)} y\n") == problem(
        1, "unknown_directive",
        "Unknown directive 'history_dataset_nme'; closest valid names: history_dataset_name, history_dataset_type, "
        "history_dataset_as_image.",
        "x ${galaxy history_dataset_name(hid=3)} y", directive="history_dataset_nme",
    )
    assert only_problem("${galaxy history_dataset_as_image(hid=3, path=my plot)}\n") == problem(
        1, "unquoted_value_with_spaces", 'The value of path contains spaces, so it must be quoted: path="my plot".',
        '${galaxy history_dataset_as_image(hid=3, path="my plot")}',
        directive="history_dataset_as_image", argument="path",
    )


def test_embed_of_a_block_only_directive():
    found = only_problem("Table: ${galaxy history_dataset_as_table(hid=3)}\n")
    assert found["rule"] == "directive_not_embeddable" and found["line"] == 1 and found["argument"] is None
    assert found["directive"] == "history_dataset_as_table"
    assert found["message"].startswith("history_dataset_as_table cannot be embedded inline with ${galaxy ...}; put it")
    assert "history_dataset_name" in found["message"]
    assert found["suggestion"] == "```galaxy\nhistory_dataset_as_table(hid=3)\n```"


def test_embed_unknown_argument_and_empty_embed():
    assert only_problem("${galaxy history_dataset_name(hdi=3)}\n") == problem(
        1, "unknown_argument",
        "history_dataset_name has no argument 'hdi'; valid arguments of history_dataset_name: hid, "
        "history_dataset_id, input, invocation_id, output, collapse. Did you mean 'hid'?",
        "${galaxy history_dataset_name(hid=3)}", directive="history_dataset_name", argument="hdi",
    )
    assert only_problem("${galaxy }\n") == problem(
        1, "malformed_embed",
        "'${galaxy' must be followed by a directive call, e.g. ${galaxy generate_time()}; remove the empty embed.",
        "Delete line 1.",
    )


def test_several_problems_are_reported_in_line_order():
    content = "Bad ${galaxy generate_tim()}\n\n" + fence("history_link(history_id=a b, colour=red)")
    assert [(p.line, p.rule, p.argument) for p in diagnose(content)] == [
        (1, "unknown_directive", None),
        (4, "unquoted_value_with_spaces", "history_id"),
        (4, "unknown_argument", "colour"),
    ]


# --- fallbacks and the error type --------------------------------------------------------------


def test_generic_problem_when_nothing_specific_is_found(monkeypatch):
    def reject(content, internal=True):
        raise ValueError("Invalid line 2: something\n  unusual")

    monkeypatch.setattr(markdown_parse, "validate_galaxy_markdown", reject)
    assert diagnose("a\nb\n")[0].as_dict() == problem(
        2, "invalid_syntax", "Galaxy rejected this line: something unusual", GENERAL_RULES
    )


def test_explanation_crash_falls_back_to_galaxy_verdict(monkeypatch):
    def crash(content):
        raise RuntimeError("bug")

    monkeypatch.setattr(page_directives, "_explain", crash)
    assert [(p.line, p.rule) for p in diagnose(fence("generate_time", "x"))] == [(2, "invalid_syntax")]


def test_without_galaxy_every_page_is_refused(monkeypatch):
    monkeypatch.setattr(page_directives, "_galaxy", None)
    assert diagnose("fine") == [DirectiveProblem(
        1, None, None, "validator_unavailable", "Galaxy's markdown validator cannot be imported.",
        "Run inside Galaxy's Python environment.",
    )]


def test_non_text_content_is_a_page_content_error():
    assert [p.rule for p in diagnose(None)] == ["invalid_syntax"]
    with pytest.raises(PageContentError):
        validate(None)


def test_page_content_error_summary():
    with pytest.raises(PageContentError) as raised:
        validate(fence("generate_time()", "generate_time()"))
    error = raised.value
    assert isinstance(error, ValueError)
    assert [p.rule for p in error.problems] == ["one_directive_per_fence"]
    assert str(error).splitlines()[:3] == [
        "Galaxy page markdown is invalid (1 problem):",
        "- line 3 (generate_time) [one_directive_per_fence]: A ```galaxy fence holds exactly one directive, but the "
        "one opened on line 1 has 2 (generate_time, generate_time). Give each directive its own fence.",
        "  fix: ```galaxy",
    ]


def test_as_dict_keys():
    assert list(DirectiveProblem(1, None, None, "r", "m", "s").as_dict()) == [
        "line", "directive", "argument", "rule", "message", "suggestion"
    ]


# --- properties over generated Galaxy-flavoured markdown ---------------------------------------

DIRECTIVES = list(markdown_parse.VALID_ARGUMENTS)
JUNK_DIRECTIVES = ["histroy_link", "Generate_time", "history_dataset_as_tabel", "frobnicate", "table"]
JUNK_ARGUMENTS = ["history_dataset_idd", "colour", "my arg", "hid-x", ""]
VALUES = st.sampled_from([
    "abc123", "3", "true", '"My title"', "'single quoted'", "My title", "plots/a.png", '""', '"unbalanced',
    "it's here", "", 'a "b" c',
])


def argument_names(directive):
    spec = markdown_parse.VALID_ARGUMENTS.get(directive)
    real = list(spec) if isinstance(spec, list) and spec else ["history_dataset_id"]
    return st.sampled_from(real + markdown_parse.SHARED_ARGUMENTS + JUNK_ARGUMENTS)


@st.composite
def directive_calls(draw, names=st.sampled_from(DIRECTIVES + JUNK_DIRECTIVES)):
    name = draw(names)
    arguments = draw(st.lists(st.tuples(argument_names(name), VALUES), max_size=3))
    inner = ", ".join(f"{arg}={value}" if arg else value for arg, value in arguments)
    shape = draw(st.sampled_from(["call"] * 6 + ["no_parens", "unclosed", "trailing_comma", "spaced"]))
    return {
        "call": f"{name}({inner})",
        "no_parens": name,
        "unclosed": f"{name}({inner}",
        "trailing_comma": f"{name}({inner},)",
        "spaced": f"  {name} ({inner})  ",
    }[shape]


EMBEDDABLE = st.sampled_from(markdown_parse.EMBED_CAPABLE_DIRECTIVES + ["history_dataset_as_table", "histroy_name"])


@st.composite
def embeds(draw):
    embed = "${galaxy " + draw(directive_calls(names=EMBEDDABLE)) + "}"
    mangle = draw(st.sampled_from([None] * 4 + ["no_brace", "brace_later", "no_paren", "empty"]))
    if mangle == "no_brace":
        embed = embed[:-1]
    elif mangle == "brace_later":
        embed = embed[:-1] + " then text}"
    elif mangle == "no_paren":
        embed = embed.replace(")}", "}")
    elif mangle == "empty":
        embed = "${galaxy }"
    return embed


@st.composite
def galaxy_fences(draw):
    lines = draw(st.lists(st.one_of(directive_calls(), st.just(""), st.just("Some prose."), embeds()),
                          max_size=3))
    closing = draw(st.sampled_from(["```"] * 6 + ["```python", "``` ", None]))
    return "\n".join(["```galaxy", *lines] + ([closing] if closing is not None else []))


PARAGRAPHS = st.one_of(
    st.sampled_from(["# Title", "Plain text.", "", "* item", "    indented ${galaxy code(}", "{braces} here"]),
    st.builds(lambda before, embed, after: f"{before}{embed}{after}",
              st.sampled_from(["", "See ", "Two: ${galaxy generate_time()} "]), embeds(),
              st.sampled_from(["", ".", " and }", " ${galaxy generate_time()}"])),
)
CODE_FENCES = st.sampled_from(["```python\nprint('hi')\n```", "```\n${galaxy broken(}\n```", "```\nunclosed code"])
DOCUMENTS = st.lists(st.one_of(PARAGRAPHS, galaxy_fences(), CODE_FENCES), max_size=6).flatmap(
    lambda blocks: st.sampled_from(["\n", "\n\n"]).map(lambda sep: sep.join(blocks))
)
LINE_FIX_RULES = {
    "unquoted_value_with_spaces", "unquoted_value_with_symbols", "bad_quoting", "empty_value", "unknown_argument",
    "malformed_argument", "missing_parentheses", "malformed_embed", "unknown_directive", "text_in_fence",
}


def is_corrected_line(found: DirectiveProblem) -> bool:
    """Whether the suggestion is a replacement for the problem's line (rather than advice or a new fence)."""
    advice = found.suggestion.startswith(("Replace ", "Delete ", "Move ", "Insert "))
    return found.rule in LINE_FIX_RULES and "\n" not in found.suggestion and not advice


@PROPERTY
@given(DOCUMENTS)
def test_every_rejection_is_explained_and_lines_are_in_range(document):
    # Acceptance needs no test: diagnose() asks Galaxy's validator first and returns [] exactly when it accepts.
    # What is tested is the other half: every document Galaxy rejects gets at least one explanation.
    problems = diagnose(document)
    assert bool(problems) == (not galaxy_accepts(document))
    line_count = len(document.splitlines())
    assert all(1 <= p.line <= line_count for p in problems)
    assert all(p.rule and p.message and p.suggestion for p in problems)
    assert [p.line for p in problems] == sorted(p.line for p in problems)
    # Generated mistakes are all ones we can name: Galaxy's bare message is never needed.
    assert not any(p.rule == "invalid_syntax" for p in problems), problems


@PROPERTY
@given(DOCUMENTS)
def test_validate_raises_only_page_content_error(document):
    try:
        validate(document)
    except PageContentError as error:
        assert error.problems and str(error)
        assert not galaxy_accepts(document)
    else:
        assert galaxy_accepts(document)


@PROPERTY
@given(DOCUMENTS)
def test_corrected_lines_fix_their_line(document):
    lines = document.splitlines()
    by_line: dict[int, list[DirectiveProblem]] = {}
    for found in diagnose(document):
        by_line.setdefault(found.line, []).append(found)
    for line_no, found in by_line.items():
        if not all(is_corrected_line(p) for p in found):
            continue
        line_fixes = {p.suggestion for p in found}
        assert len(line_fixes) == 1, found  # problems on one line share one corrected line
        fixed = "\n".join(lines[: line_no - 1] + [line_fixes.pop()] + lines[line_no:])
        remaining = [p for p in diagnose(fixed) if p.line == line_no and p.rule != "one_directive_per_fence"]
        assert remaining == [], (line_no, found, remaining)
