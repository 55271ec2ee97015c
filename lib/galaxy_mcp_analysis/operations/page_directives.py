"""Explain why Galaxy rejects a page's markdown, in terms an agent can act on.

Galaxy pages ("Galaxy-flavoured markdown") add ```` ```galaxy```` fences holding one
directive call, and inline ``${galaxy name(arg=value)}`` embeds.  Galaxy's validator stops
at the first bad line with a terse message that names no rule and offers no fix, so an
agent writing a page cannot repair it.

Galaxy stays the only judge: ``diagnose`` returns ``[]`` exactly when
``validate_galaxy_markdown`` accepts the text.  Only after a rejection do we re-read the
document, walking it the way Galaxy does, to say which directive and argument broke which
rule, with a corrected line to copy.  We explain the language, never extend or relax it;
Galaxy's directive table and regexes are imported at runtime (not copied) to track upgrades.
"""

from __future__ import annotations

import difflib
import inspect
import re
from dataclasses import asdict, dataclass

try:
    from galaxy.managers import markdown_parse as _galaxy
except ImportError:  # pragma: no cover - only used inside Galaxy's venv; stay importable for tooling
    _galaxy = None

FENCE = "```"
GENERAL_RULES = (
    "Put exactly one directive in each ```galaxy fence, on one line, as name(arg=value, ...), with no blank "
    "lines, and close the fence with a line containing only ```. Quote values that contain spaces or symbols "
    '(title="My title"). Inline embeds look like ${galaxy history_dataset_name(history_dataset_id=abc123)}.'
)

_DIRECTIVE_NAME = re.compile(r"\s*([A-Za-z_]\w*)\s*")
_LOOKS_LIKE_CALL = re.compile(r"\s*[A-Za-z_]\w*\s*(?:\(|$)")
_ARGUMENT_NAME = re.compile(r"[\w|]+")
_EMBED_START = re.compile(r"\$\{galaxy\s+")
_EMBED_IN_FENCE = re.compile(r"\s*\$\{galaxy\s+(.*)\}\s*")
_BARE_FENCE_CLOSE = re.compile(r"```\s*")
_GALAXY_LINE_NUMBER = re.compile(r"Invalid line (\d+):\s*")
_VALID_VALUE = re.compile(_galaxy.ARG_VAL_REGEX) if _galaxy else None  # bare word or non-empty quoted text


@dataclass(frozen=True)
class DirectiveProblem:
    line: int  # 1-based line number in the document
    directive: str | None  # directive concerned, None when not applicable
    argument: str | None  # offending argument name (or offending text)
    rule: str  # stable short rule id
    message: str  # what is wrong, for an agent
    suggestion: str  # corrected line, fence or concrete fix

    def as_dict(self) -> dict:
        return asdict(self)


class PageContentError(ValueError):
    """Galaxy rejects the page markdown; ``problems`` says where, why and how to fix it."""

    def __init__(self, problems: list[DirectiveProblem]):
        self.problems = list(problems)
        plural = "" if len(self.problems) == 1 else "s"
        lines = [f"Galaxy page markdown is invalid ({len(self.problems)} problem{plural}):"]
        for problem in self.problems:
            where = f"line {problem.line}" + (f" ({problem.directive})" if problem.directive else "")
            lines.append(f"- {where} [{problem.rule}]: {problem.message}")
            lines.append("  fix: " + problem.suggestion.replace("\n", "\n       "))
        super().__init__("\n".join(lines))


def diagnose(content: str, internal: bool = True) -> list[DirectiveProblem]:
    """[] iff Galaxy's validate_galaxy_markdown accepts content; otherwise why it does not. Never raises."""
    if _galaxy is None:
        return [_problem(1, "validator_unavailable", "Galaxy's markdown validator cannot be imported.",
                         "Run inside Galaxy's Python environment.")]
    try:
        # unwrap: once the page-validator patch wraps Galaxy's function with this module,
        # the verdict must still come from Galaxy's own code.
        inspect.unwrap(_galaxy.validate_galaxy_markdown)(content, internal=internal)
        return []
    except Exception as rejection:  # noqa: BLE001 - any failure of Galaxy's check is a rejection
        galaxy_error = rejection
    try:
        problems = _explain(content)
    except Exception:  # noqa: BLE001 - explaining is best effort; Galaxy's verdict stands regardless
        problems = []
    return _cover_galaxy_line(problems, galaxy_error, content)


def validate(content: str, internal: bool = True) -> None:
    """Raise PageContentError (and nothing else) when Galaxy would reject content."""
    problems = diagnose(content, internal=internal)
    if problems:
        raise PageContentError(problems)


def _problem(line, rule, message, suggestion, directive=None, argument=None) -> DirectiveProblem:
    return DirectiveProblem(line, directive, argument, rule, message, suggestion)


def _cover_galaxy_line(problems, galaxy_error, content) -> list[DirectiveProblem]:
    """Make sure the line Galaxy complained about is explained, falling back to Galaxy's own words."""
    reason = " ".join(str(galaxy_error).split()) or type(galaxy_error).__name__
    numbered = _GALAXY_LINE_NUMBER.match(reason)
    galaxy_line = int(numbered.group(1)) if numbered else 1
    # An unclosed fence explains every error inside it, and the end-of-document error
    # that Galaxy numbers from 0 (hence the + 1).
    if not any(p.line == galaxy_line or (p.rule == "unclosed_fence" and p.line <= galaxy_line + 1) for p in problems):
        line_count = len(content.splitlines()) if isinstance(content, str) else 1
        reason = reason[numbered.end():] if numbered else reason
        problems = [*problems, _problem(min(max(galaxy_line, 1), max(line_count, 1)), "invalid_syntax",
                                        f"Galaxy rejected this line: {reason}", GENERAL_RULES)]
    return sorted(problems, key=lambda p: p.line)


def _explain(content: str) -> list[DirectiveProblem]:
    """Walk the lines with Galaxy's notion of fencing and check what Galaxy checks."""
    problems: list[DirectiveProblem] = []
    in_block = indented = False
    galaxy_fence = None  # (opening line number, [(line number, text)]) while inside ```galaxy
    for index, raw in enumerate(content.splitlines(True)):
        line_no, text = index + 1, raw.splitlines()[0]
        # To Galaxy, four-space-indented lines (and blank lines after them) are code: never checked.
        indented = raw.startswith("    ") or (indented and not raw.strip())
        opens = not in_block and raw.startswith(FENCE)
        in_block = in_block or opens
        if galaxy_fence is not None:
            if raw.startswith(FENCE):  # Galaxy closes a galaxy fence on *any* ``` line, ```python included
                problems += _check_fence(*galaxy_fence, closing=text)
                galaxy_fence = None
            else:
                galaxy_fence[1].append((line_no, text))
        elif opens and _galaxy.GALAXY_FLAVORED_MARKDOWN_CONTAINER_LINE_PATTERN.match(raw):
            galaxy_fence = (line_no, [])
        elif not (in_block or indented):  # code blocks are never checked for embeds
            problems += _check_embed_line(raw, line_no)
        if raw.startswith(FENCE) and not opens:
            in_block = False
    if galaxy_fence is not None:
        problems += _check_fence(*galaxy_fence, closing=None)
    return problems


def _check_fence(open_line: int, body: list[tuple[int, str]], closing: str | None) -> list[DirectiveProblem]:
    problems = []
    first_prose = next((i for i, (_, text) in enumerate(body) if text.strip() and not _LOOKS_LIKE_CALL.match(text)),
                       len(body))
    last_call = max((i for i in range(first_prose) if body[i][1].strip()), default=-1)
    swallowed = body[last_call + 1:]
    # A fence that runs to the end, or into prose and then some other ``` line, was
    # almost always meant to end after its directive: say that, not "bad line".
    if closing is None or (first_prose < len(body) and not _BARE_FENCE_CLOSE.fullmatch(closing)):
        anchor = body[last_call][0] if last_call >= 0 else open_line
        message = (f"The ```galaxy fence opened on line {open_line} is not closed before line {swallowed[0][0]}, "
                   "so the lines after it are read as Galaxy directives." if swallowed else
                   f"The ```galaxy fence opened on line {open_line} is never closed.")
        problems.append(_problem(open_line, "unclosed_fence", message,
                                 f"Insert a line containing only ``` after line {anchor}."))
        body = body[:last_call + 1]
    calls = []  # (line number, directive, corrected call) for the one-per-fence check
    for line_no, text in body:
        if not text.strip():
            problems.append(_problem(line_no, "blank_line_in_fence", "Blank lines are not allowed inside a ```galaxy "
                                     "fence.", f"Delete line {line_no}; the fence holds only its directive line."))
        elif not _LOOKS_LIKE_CALL.match(text):
            wrapped = _EMBED_IN_FENCE.fullmatch(text)
            call = _check_call(wrapped.group(1), embed=False) if wrapped else None
            hint = ("write the directive without the ${galaxy ...} wrapper" if call else "move other text out of it")
            problems.append(_problem(line_no, "text_in_fence", f"A ```galaxy fence may only contain one directive "
                                     f"call such as name(arg=value); {hint}.",
                                     call.corrected if call else f"Move line {line_no} below the closing ```.",
                                     argument=text.strip()))
        else:
            call = _check_call(text, embed=False)
            findings = call.findings
            if _galaxy.GALAXY_MARKDOWN_FUNCTION_CALL_LINE.match(text):  # well formed: Galaxy checks names only
                findings = [f for f in findings if f.rule == "unknown_argument"]
            calls.append((line_no, call.name, call.corrected if findings else text.strip()))
            problems += [f.at(line_no, call.corrected) for f in findings]
    if len(calls) > 1:
        split = "\n".join(f"```galaxy\n{corrected}\n```" for _, _, corrected in calls)
        names = ", ".join(name for _, name, _ in calls)
        problems.append(_problem(calls[1][0], "one_directive_per_fence", f"A ```galaxy fence holds exactly one "
                                 f"directive, but the one opened on line {open_line} has {len(calls)} ({names}). "
                                 "Give each directive its own fence.", split, directive=calls[1][1]))
    return problems


def _check_embed_line(raw: str, line_no: int) -> list[DirectiveProblem]:
    if not _galaxy.EMBED_DIRECTIVE_REGEX_ANY.search(raw):
        return []  # Galaxy only looks at lines with "${galaxy ...}" up to some closing brace
    # Galaxy accepts the line once one embed is well formed, and then checks only
    # that embed's argument names; otherwise every embed on the line is suspect.
    well_formed = _galaxy.EMBED_DIRECTIVE_REGEX.search(raw)
    line = raw.splitlines()[0]
    findings, corrected_parts, cursor = [], [], 0
    for start in _EMBED_START.finditer(line):
        if start.start() < cursor or (well_formed and start.start() != well_formed.start()):
            continue
        call = _check_call(line[start.end():], embed=True)
        if call is None:
            brace = line.find("}", start.end())
            end, replacement = (brace + 1 if brace >= 0 else len(line)), ""
            found = [_Finding("malformed_embed", None, None, "'${galaxy' must be followed by a directive call, "
                              "e.g. ${galaxy generate_time()}; remove the empty embed.")]
        else:
            end, found = start.end() + call.end, call.findings
            brace = re.match(r"\s*\}", line[end:])
            end += brace.end() if brace else 0
            if not brace:
                found.append(_Finding("malformed_embed", call.name, None, "An inline embed must end with '}' right "
                                      "after the directive's closing ')'."))
            replacement = "${galaxy " + call.corrected + "}"
        if well_formed:
            found = [f for f in found if f.rule == "unknown_argument"]
        if found:
            corrected_parts.append(line[cursor:start.start()] + replacement)
            findings += found
            cursor = end
    corrected_line = "".join(corrected_parts) + line[cursor:]
    if not corrected_line.strip():
        corrected_line = f"Delete line {line_no}."
    return [finding.at(line_no, corrected_line) for finding in findings]


@dataclass
class _Finding:
    rule: str
    directive: str | None
    argument: str | None
    message: str
    suggestion: str | None = None  # set when the fix is not "use the corrected line"

    def at(self, line_no: int, corrected_line: str) -> DirectiveProblem:
        return DirectiveProblem(line_no, self.directive, self.argument, self.rule, self.message,
                                self.suggestion or corrected_line)


@dataclass
class _Call:
    name: str  # directive name, replaced by the closest valid one when unknown
    corrected: str  # the call rewritten so that Galaxy accepts it
    end: int  # index just past the call (past ')' when present)
    findings: list[_Finding]


def _check_call(text: str, embed: bool) -> _Call | None:
    """Parse ``name(arg=value, ...)`` leniently, recording each rule it breaks; None if no name."""
    head = _DIRECTIVE_NAME.match(text)
    if not head:
        return None
    findings: list[_Finding] = []
    name = _resolve_directive(head.group(1), embed, findings)
    has_parentheses = text.startswith("(", head.end())
    pieces, end, closed = _split_arguments(text, head.end() + has_parentheses, embed)
    if not has_parentheses:
        findings.append(_Finding("missing_parentheses", name, None, f"A directive is a call: write {name}(...) "
                                 "with parentheses, even without arguments."))
        pieces = pieces if any("=" in piece for piece in pieces) else []
    elif not closed:
        findings.append(_Finding("malformed_embed" if embed else "missing_parentheses", name, None,
                                 f"The call to {name} is missing its closing ')'."))
    if len(pieces) == 1 and not pieces[0].strip():
        pieces = []  # name() has no arguments, not one empty one
    valid = _valid_arguments(name)
    fixed = [arg for arg in (_check_argument(piece, name, valid, findings) for piece in pieces) if arg]
    corrected = f"{name}({', '.join(fixed)})"
    for finding in findings:
        if finding.rule == "directive_not_embeddable":
            finding.suggestion = f"```galaxy\n{corrected}\n```"
    return _Call(name, corrected, end, findings)


def _resolve_directive(name: str, embed: bool, findings: list[_Finding]) -> str:
    allowed = list(_galaxy.EMBED_CAPABLE_DIRECTIVES if embed else _galaxy.VALID_ARGUMENTS)
    if name in allowed:
        return name
    if embed and name in _galaxy.VALID_ARGUMENTS:
        findings.append(_Finding("directive_not_embeddable", name, None, f"{name} cannot be embedded inline with "
                                 f"${{galaxy ...}}; put it in its own ```galaxy fence (inline-capable directives: "
                                 f"{', '.join(allowed)})."))
        return name
    closest = difflib.get_close_matches(name.lower(), allowed, n=3, cutoff=0.6)
    if closest:
        findings.append(_Finding("unknown_directive", name, None,
                                 f"Unknown directive '{name}'; closest valid names: {', '.join(closest)}."))
        return closest[0]
    findings.append(_Finding("unknown_directive", name, None, f"Unknown directive '{name}'; valid names: "
                             f"{', '.join(allowed)}.", suggestion=f"Replace '{name}' with one of the valid names."))
    return name


def _valid_arguments(directive: str) -> list[str] | None:
    """Argument names Galaxy accepts for directive; None when it accepts any (or we cannot tell)."""
    spec = _galaxy.VALID_ARGUMENTS.get(directive)
    if spec is None or isinstance(spec, _galaxy.DynamicArguments):
        return None
    return list(spec) + [shared for shared in _galaxy.SHARED_ARGUMENTS if shared not in spec]


def _split_arguments(text: str, start: int, embed: bool, quotes: bool = True) -> tuple[list[str], int, bool]:
    """Split at top-level commas up to ')' -> (pieces, index past the call, whether ')' was found)."""
    pieces, current, quote, value_starts = [], [], None, False
    index = start
    while index < len(text):
        char = text[index]
        if quote:
            quote = None if char == quote else quote
        elif char in "\"'" and value_starts and quotes:  # a quote only opens a value, so "it's" stays text
            quote = char
        elif char == ",":
            pieces.append("".join(current))
            current, value_starts, index = [], False, index + 1
            continue
        elif char == ")":
            return [*pieces, "".join(current)], index + 1, True
        elif char == "}" and embed:
            break
        current.append(char)
        value_starts = char == "=" or (value_starts and char.isspace())
        index += 1
    if quote:  # an unbalanced quote would swallow the rest of the line; read it as plain text
        return _split_arguments(text, start, embed, quotes=False)
    return [*pieces, "".join(current)], index, False


def _check_argument(piece: str, directive: str, valid: list[str] | None, findings: list[_Finding]) -> str | None:
    """Return the corrected ``name=value`` (None to drop the argument), recording what was wrong."""
    text = piece.strip()
    listing = f"; valid arguments of {directive}: {', '.join(valid)}" if valid else ""
    if not text or "=" not in text:
        what = f"'{text}' is not written as name=value" if text else "There is an empty argument (stray comma)"
        findings.append(_Finding("malformed_argument", directive, text or None, f"{what}{listing}."))
        return None
    name, value = (part.strip() for part in text.split("=", 1))
    if not _ARGUMENT_NAME.fullmatch(name):
        cleaned = re.sub(r"[^\w|]+", "_", name).strip("_")
        findings.append(_Finding("malformed_argument", directive, name, f"Argument name '{name}' may only contain "
                                 "letters, digits, '_' and '|'."))
        if not cleaned:
            return None
        name = cleaned
    if valid is not None and name not in valid:
        closest = difflib.get_close_matches(name, valid, n=1, cutoff=0.5)
        guess = f" Did you mean '{closest[0]}'?" if closest else ""
        message = f"{directive} has no argument '{name}'{listing}.{guess}"
        findings.append(_Finding("unknown_argument", directive, name, message))
        if not closest:
            return None
        name = closest[0]
    value = _check_value(value, directive, name, findings)
    return f"{name}={value}" if value else None


def _check_value(value: str, directive: str, argument: str, findings: list[_Finding]) -> str | None:
    if _VALID_VALUE.fullmatch(value):
        return value
    starts_quoted = value[:1] in ("'", '"')
    inner = value[1:-1] if starts_quoted and value[1:] and value[-1] == value[0] else value
    inner = inner.strip("\"'") if starts_quoted else inner  # drop the stray quotes of "abc or "a" b
    if not inner:
        findings.append(_Finding("empty_value", directive, argument, f"{argument} has an empty value; give it a "
                                 "value or drop the argument."))
        return None
    quote = "'" if '"' in inner and "'" not in inner else '"'  # Galaxy has no escapes: pick the unused quote
    quoted = quote + (inner if quote == "'" else inner.replace('"', "'")) + quote
    if starts_quoted:
        rule, why = "bad_quoting", "has unbalanced or mixed quotes"
    elif re.search(r"\s", inner):
        rule, why = "unquoted_value_with_spaces", "contains spaces, so it must be quoted"
    else:
        rule = "unquoted_value_with_symbols"
        why = "contains characters other than letters, digits, '_' and '-', so it must be quoted"
    findings.append(_Finding(rule, directive, argument, f"The value of {argument} {why}: {argument}={quoted}."))
    return quoted


# ---- Ids a page refers to ------------------------------------------------------------

#: Directive arguments that name a Galaxy object by id (the ones Galaxy decodes on import).
ID_ARGUMENTS = (
    "history_dataset_id",
    "history_dataset_collection_id",
    "history_id",
    "job_id",
    "invocation_id",
    "workflow_id",
    "implicit_collection_jobs_id",
)
_ID_ARGUMENT = re.compile(r"\b(" + "|".join(ID_ARGUMENTS) + r")\s*=\s*(\"[^\"]*\"|'[^']*'|[^\s,)}]+)")


@dataclass(frozen=True)
class IdReference:
    line: int
    directive: str
    argument: str  # e.g. "history_dataset_id"
    value: str  # the encoded id as written, quotes removed


def referenced_ids(content: str) -> list[IdReference]:
    """Every id argument of the directives and inline embeds of an accepted page, in order.

    Lines are classified the way ``_explain`` does (ordinary code fences and indented
    code are not directives); call it on content ``diagnose`` accepted.
    """
    references = []
    in_block = indented = in_galaxy = False
    for index, raw in enumerate(content.splitlines(True)):
        indented = raw.startswith("    ") or (indented and not raw.strip())
        if raw.startswith(FENCE):
            in_galaxy = not in_block and bool(_galaxy.GALAXY_FLAVORED_MARKDOWN_CONTAINER_LINE_PATTERN.match(raw))
            in_block = not in_block
            continue
        if in_galaxy:
            calls = [raw]
        elif in_block or indented:
            continue
        else:
            calls = [raw[start.end():] for start in _EMBED_START.finditer(raw)]
        for call in calls:
            head = _DIRECTIVE_NAME.match(call)
            name = head.group(1) if head else ""
            arguments = call[head.end():].split("}", 1)[0] if head else call
            for match in _ID_ARGUMENT.finditer(arguments):
                references.append(IdReference(index + 1, name, match.group(1), match.group(2).strip("\"'")))
    return references
