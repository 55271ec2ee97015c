"""Check a ``create_collection`` request before Galaxy creates anything.

Galaxy's collection manager loads elements one by one and copies or hides them as
it goes, so a structural mistake found half-way (a third element in a ``paired``,
a dataset where ``list:paired`` wants a pair) can leave copies behind; some
mistakes it does not catch at all (a ``paired`` built from ``a`` and ``b`` comes
out empty). Everything that can be decided from the request alone is decided
here, against the requested ``collection_type``, and every problem is reported
with the path of the element, what is allowed there and how to fix it.

What cannot be decided without Galaxy (does the id exist, may this user read it,
is an ``hdca`` of the right type) is returned as a flat list of references for
the adapter to check, also before anything is created. Elements given as text
(``src: "pasted"``) are returned likewise, checked for size and shape, for the
adapter to upload in one fetch before the collection is made of them.
"""

from collections.abc import (
    Callable,
    Mapping,
    Sequence,
)
from dataclasses import dataclass
from typing import Any

from galaxy_mcp_analysis.core.column_names import (
    column_header,
    ColumnHeader,
)
from galaxy_mcp_analysis.core.errors import InvalidInput
from galaxy_mcp_analysis.core.managing import TAG_FORM
from galaxy_mcp_analysis.core.pasted_text import paste_problem

#: Collection ranks create_collection builds; ``record`` and ``sample_sheet`` need
#: field and column definitions that only Galaxy's REST API takes.
RANK_TYPES = ("list", "paired", "paired_or_unpaired")
FORWARD, REVERSE, UNPAIRED = "forward", "reverse", "unpaired"
DATASET_SOURCES = ("hda", "ldda")
#: A dataset given as text, uploaded by create_collection itself.
PASTED = "pasted"
NESTED_COLLECTION_SOURCES = ("new_collection", "hdca")
#: Galaxy's column for a collection's type is Unicode(255) (galaxy.model.DatasetCollection).
MAX_COLLECTION_TYPE_LENGTH = 255
#: Galaxy's column for an element identifier is Unicode(255) (galaxy.model.DatasetCollectionElement);
#: PostgreSQL refuses longer values (and NUL characters) mid-creation, sqlite stores them.
MAX_ELEMENT_NAME_LENGTH = 255
ELEMENT_KEYS = frozenset({"name", "src", "id", "collection_type", "element_identifiers", "tags"})
PASTED_KEYS = frozenset({"name", "src", "content", "file_type", "dbkey", "tags", "column_names", "header"})
#: Levels of nesting create_collection builds. Measured on sqlite: a 60-level list is created, then every
#: listing of its history fails ("at most 64 tables in a join", HTTP 500); 32 levels still list.
MAX_NESTING_LEVELS = 16
#: A request this wrong is reported in part; the first problems are the useful ones.
MAX_REPORTED_PROBLEMS = 10

_PAIR = frozenset({FORWARD, REVERSE})
_NAMES_BY_RANK = {
    "paired": (_PAIR,),
    "paired_or_unpaired": (_PAIR, frozenset({UNPAIRED})),
}


class InvalidElements(InvalidInput):
    """The request's collection_type or element_identifiers cannot make the collection asked for."""


@dataclass(frozen=True)
class ElementReference:
    """An existing item the new collection would contain, for the adapter to look up."""

    path: str  # e.g. "element_identifiers[2].element_identifiers[0]"
    src: str  # "hda", "ldda" or "hdca"
    id: str
    #: For an ``hdca``: the collection_type it must have to fit at this level.
    collection_type: str | None = None


@dataclass(frozen=True)
class PastedElement:
    """A dataset the new collection would contain, given as its text (uploaded before the collection is made)."""

    path: str
    name: str | None
    content: str
    file_type: str = "auto"
    dbkey: str = "?"
    #: Its column names (``column_names`` or ``header``), set as Galaxy's metadata after the upload.
    header: ColumnHeader | None = None


@dataclass(frozen=True)
class CheckedElements:
    """What a request that fits its collection_type names: existing items, or pasted texts (never both)."""

    references: list[ElementReference]
    pasted: list[PastedElement]


def collection_ranks(collection_type: Any) -> list[str]:
    """``"list:paired"`` -> ``["list", "paired"]``, or InvalidElements naming what is allowed."""
    if not isinstance(collection_type, str) or not collection_type:
        raise InvalidElements(
            f"collection_type must be a non-empty string such as 'list' or 'list:paired', got {collection_type!r}."
        )
    if len(collection_type) > MAX_COLLECTION_TYPE_LENGTH:
        # sqlite stores longer strings; PostgreSQL refuses them mid-creation (a server error).
        raise InvalidElements(
            f"collection_type is {len(collection_type)} characters long; Galaxy stores at most "
            f"{MAX_COLLECTION_TYPE_LENGTH} (about 50 nested 'list' levels). Use fewer levels of nesting."
        )
    ranks = collection_type.split(":")
    if len(ranks) > MAX_NESTING_LEVELS:
        raise InvalidElements(
            f"collection_type has {len(ranks)} levels; create_collection builds at most {MAX_NESTING_LEVELS} "
            "(deeper collections break Galaxy's history listings). Use fewer levels of nesting."
        )
    unknown = [rank for rank in ranks if rank not in RANK_TYPES]
    if unknown:
        raise InvalidElements(
            f"collection_type {collection_type!r}: {unknown[0]!r} is not a collection rank create_collection builds. "
            f"Use {', '.join(RANK_TYPES)}, joined by ':' for nesting (e.g. 'list:paired'). "
            "record and sample_sheet collections need field definitions: create them with Galaxy's REST API."
        )
    return ranks


def check_element_identifiers(
    collection_type: Any,
    element_identifiers: Any,
    is_tag: Callable[[str], bool] = bool,
    max_paste_bytes: int | None = None,
) -> CheckedElements:
    """Every existing item (or pasted text) the request names, once the whole request fits ``collection_type``.

    ``is_tag`` judges each element tag; the adapter passes Galaxy's own tag form (Galaxy stores some tags
    its API cannot read back, which breaks every listing of the history). ``max_paste_bytes`` caps each
    pasted content and all of them together (None: pasted elements are refused)."""
    ranks = collection_ranks(collection_type)
    check = _Check(is_tag, max_paste_bytes)
    check.level(ranks, element_identifiers, "element_identifiers")
    check.pasted_totals()
    if check.problems:
        raise InvalidElements(_problem_report(check.problems, collection_type))
    return CheckedElements(check.references, check.pasted)


def pastes(arguments: Mapping[str, Any]) -> bool:
    """Whether a create_collection call's elements name a pasted text at any depth, however malformed the
    rest: such a call uploads them in a job (policy class ``creates_jobs``); one of existing items starts none."""

    def named(value: Any) -> bool:
        if isinstance(value, dict):
            return value.get("src") == PASTED or any(named(inner) for inner in value.values())
        return isinstance(value, list) and any(named(inner) for inner in value)

    return named(arguments.get("element_identifiers"))


def with_dataset_ids(element_identifiers: list[dict], dataset_ids: list[str]) -> list[dict]:
    """The request with each pasted element, in the order checked, made ``{"src": "hda", "id": ...}``
    of its uploaded dataset (name and tags kept)."""
    ids = iter(dataset_ids)

    def level(elements: list[dict]) -> list[dict]:
        return [element_with_id(element) for element in elements]

    def element_with_id(element: dict) -> dict:
        if element.get("src") == PASTED:
            kept = {key: element[key] for key in ("name", "tags") if key in element}
            return {**kept, "src": "hda", "id": next(ids)}
        if element.get("src") == "new_collection":
            return {**element, "element_identifiers": level(element["element_identifiers"])}
        return element

    return level(element_identifiers)


class _Check:
    def __init__(self, is_tag: Callable[[str], bool], max_paste_bytes: int | None = None):
        self.is_tag = is_tag
        self.max_paste_bytes = max_paste_bytes
        self.problems: list[str] = []
        self.references: list[ElementReference] = []
        self.pasted: list[PastedElement] = []

    def problem(self, path: str, text: str) -> None:
        self.problems.append(f"{path}: {text}")

    def level(self, ranks: list[str], elements: Any, path: str) -> None:
        """One collection level (``ranks[0]``) whose elements are of type ``ranks[1:]``."""
        if not isinstance(elements, list):
            self.problem(path, f"must be a list of elements, got {type(elements).__name__}.")
            return
        names = []
        for index, element in enumerate(elements):
            element_path = f"{path}[{index}]"
            if not isinstance(element, dict):
                self.problem(element_path, f"must be an object like {_example(ranks[1:])}.")
                continue
            if (name := self.name(element, element_path)) is not None:
                if name in names:
                    self.problem(
                        element_path,
                        f"the name {name!r} is already used by element {names.index(name)} at this level; "
                        "names must be unique within one collection level.",
                    )
                names.append(name)
            self.element(ranks[1:], element, element_path)
        self.rank_names(ranks[0], names, len(elements), path)

    def name(self, element: dict, path: str) -> str | None:
        name = element.get("name")
        if isinstance(name, str) and name:
            if "\x00" in name:
                self.problem(path, "the name contains a NUL character (\\x00), which Galaxy cannot store.")
            elif len(name) > MAX_ELEMENT_NAME_LENGTH:
                self.problem(
                    path, f"the name is {len(name)} characters long; Galaxy stores at most {MAX_ELEMENT_NAME_LENGTH}."
                )
            return name
        self.problem(path, f"needs a non-empty string 'name' (the element identifier), got {name!r}.")
        return None

    def rank_names(self, rank: str, names: list[str], count: int, path: str) -> None:
        allowed = _NAMES_BY_RANK.get(rank)
        # Unnamed elements are reported already; their names cannot be judged.
        if allowed is None or count != len(names) or frozenset(names) in allowed:
            return
        choices = " or ".join(f"exactly {_quoted(sorted(option))}" for option in allowed)
        self.problem(
            path,
            f"a {rank} level has {choices} as element names, got {_quoted(names)}; rename the elements to match.",
        )

    def element(self, inner_ranks: list[str], element: dict, path: str) -> None:
        src = element.get("src")
        keys = PASTED_KEYS if src == PASTED and not inner_ranks else ELEMENT_KEYS
        if unknown := sorted(set(element) - keys):
            self.problem(path, f"unknown key(s) {_quoted(unknown)}; allowed: {_quoted(sorted(keys))}.")
        if "tags" in element:
            self.tags(element["tags"], path)
        allowed = NESTED_COLLECTION_SOURCES if inner_ranks else (*DATASET_SOURCES, PASTED)
        if src not in allowed:
            self.problem(path, _wrong_src(src, inner_ranks))
            return
        if src == PASTED:
            self.pasted_element(element, path)
            return
        if src == "new_collection":
            self.new_collection(inner_ranks, element, path)
            return
        for key in ("collection_type", "element_identifiers"):
            if key in element:
                self.problem(path, f"{key!r} belongs only to src 'new_collection' elements; remove it.")
        element_id = element.get("id")
        if not isinstance(element_id, str) or not element_id:
            self.problem(path, f"src {src!r} needs the item's encoded 'id' (a string), got {element_id!r}.")
            return
        expected = ":".join(inner_ranks) if src == "hdca" else None
        self.references.append(ElementReference(path, src, element_id, expected))

    def pasted_element(self, element: dict, path: str) -> None:
        content = element.get("content")
        if not isinstance(content, str):
            self.problem(path, f"src 'pasted' needs the dataset's text as 'content' (a string), got {content!r:.40}.")
            return
        if self.max_paste_bytes is not None and (problem := paste_problem(content, self.max_paste_bytes)):
            self.problem(path, problem)
        texts = {key: element.get(key, default) for key, default in (("file_type", "auto"), ("dbkey", "?"))}
        for key, value in texts.items():
            if not isinstance(value, str) or not value or "\x00" in value:
                self.problem(path, f"{key!r} must be a non-empty string without NUL characters, got {value!r:.40}.")
        header = None
        if not isinstance(element.get("header", False), bool):
            self.problem(path, f"'header' must be true or false, got {element['header']!r:.40}.")
        else:
            try:
                header = column_header(content, element.get("column_names"), element.get("header", False))
            except ValueError as wrong:
                self.problem(path, str(wrong))
        if isinstance(element.get("name"), str):
            self.pasted.append(PastedElement(path, element["name"], content, **texts, header=header))

    def pasted_totals(self) -> None:
        """Pasted text is one upload: never mixed with existing items, and capped as a whole."""
        if not self.pasted:
            return
        if self.max_paste_bytes is None:
            self.problems.append(f"{self.pasted[0].path}: src 'pasted' is not accepted here.")
        elif self.references:
            self.problems.append(
                f"{self.references[0].path}: existing items cannot be mixed with src 'pasted' elements in one call; "
                "upload the texts first (create_dataset_from_text) and use their ids, or paste every element."
            )
        elif (total := sum(len(p.content.encode("utf-8", "surrogatepass")) for p in self.pasted)) > (
            self.max_paste_bytes
        ):
            self.problems.append(
                f"element_identifiers: the pasted contents are {total} bytes together; the server accepts at most "
                f"{self.max_paste_bytes} bytes of pasted text per call. Split them over several calls."
            )

    def tags(self, tags: Any, path: str) -> None:
        if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
            self.problem(path, f"'tags' must be a list of strings such as [\"name:sample1\"], got {tags!r:.60}.")
        elif refused := [tag for tag in tags if not self.is_tag(tag)]:
            self.problem(
                path,
                f"tag(s) {_quoted([tag[:40] for tag in refused[:5]])} are not in Galaxy's tag form: use {TAG_FORM}.",
            )

    def new_collection(self, inner_ranks: list[str], element: dict, path: str) -> None:
        expected = ":".join(inner_ranks)
        if "id" in element:
            self.problem(path, "a 'new_collection' element is built from its 'element_identifiers'; remove 'id'.")
        if element.get("collection_type") != expected:
            self.problem(
                path,
                f"its collection_type must be {expected!r} (the rest of the requested type), "
                f"got {element.get('collection_type')!r}.",
            )
        if "element_identifiers" not in element:
            self.problem(path, f"a 'new_collection' element needs 'element_identifiers', e.g. {_example(inner_ranks)}.")
            return
        self.level(inner_ranks, element["element_identifiers"], f"{path}.element_identifiers")


def _wrong_src(src: Any, inner_ranks: list[str]) -> str:
    if inner_ranks:
        return (
            f"src must be 'new_collection' (or 'hdca' for an existing {':'.join(inner_ranks)!r} collection) at this "
            f"level, got {src!r}. Wrap the datasets, e.g. {_example(inner_ranks)}."
        )
    return (
        "src must be 'hda' (history dataset), 'ldda' (library dataset) or 'pasted' (with 'content') "
        f"at this level, got {src!r}."
    )


def _example(inner_ranks: Sequence[str]) -> str:
    """The element shape expected at a level whose elements are of type ``inner_ranks``."""
    if not inner_ranks:
        return '{"name": "sample1", "src": "hda", "id": "<dataset id>"}'
    names = ("a", "b") if inner_ranks[0] == "list" else (FORWARD, REVERSE)
    leaf = '{"name": "%s", "src": "hda", "id": "<dataset id>"}'
    children = ", ".join(leaf % name for name in names) if len(inner_ranks) == 1 else "..."
    return (
        f'{{"name": "sample1", "src": "new_collection", "collection_type": "{":".join(inner_ranks)}", '
        f'"element_identifiers": [{children}]}}'
    )


def _quoted(names: Sequence[str]) -> str:
    return "[" + ", ".join(repr(name) for name in names) + "]"


def _problem_report(problems: list[str], collection_type: str) -> str:
    shown = problems[:MAX_REPORTED_PROBLEMS]
    more = len(problems) - len(shown)
    lines = [f"element_identifiers do not make a valid {collection_type!r} collection:"]
    lines += [f"- {problem}" for problem in shown]
    if more:
        lines.append(f"- ... and {more} more problem(s).")
    lines.append("Nothing was created. Fix the elements named above and call create_collection again.")
    return "\n".join(lines)
