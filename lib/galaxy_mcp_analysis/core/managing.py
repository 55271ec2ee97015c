"""Managing what was run and made: the rules that need no Galaxy.

- ``merge_changes``: a rerun's ``changes`` (nested like ``run_tool``'s inputs, or Galaxy's flat
  names ``cond|param`` and ``queries_0|input2``) laid over the job's recorded inputs. A
  conditional whose selector changes drops the recorded branch; a repeat block is named by
  its index; a dataset reference or a list is replaced whole.
- ``history_item_refs``: the ``items`` of delete/restore checked for shape before any lookup.
- ``dataset_update``, ``collection_update``, ``history_update``: the fields of ``update_dataset``,
  ``update_collection`` and ``update_history`` as Galaxy's update payload, refused when nothing or
  something unstorable is asked for.
- ``cancellable``: which job states Galaxy's stop still acts on.

Whether an item is the caller's, a datatype exists, a job may be stopped: Galaxy decides,
in ``operations.managing``. A refused request changes nothing.
"""

from collections.abc import (
    Mapping,
    Sequence,
)
from dataclasses import dataclass
from typing import Any

from galaxy_mcp_analysis.core.errors import (
    AnalysisError,
    ErrorCode,
)
from galaxy_mcp_analysis.core.flat_names import (
    REPEAT_KEY,
    SEPARATOR,
)
from galaxy_mcp_analysis.core.input_problems import (
    InputProblem,
    INVALID_VALUE,
    OUT_OF_RANGE,
    problems_error,
    WRONG_TYPE,
)
from galaxy_mcp_analysis.core.storable import check_storable

#: Keys of a value that is one input's value, never a group of parameters to merge into.
_VALUE_KEYS = frozenset({"src", "values", "batch", "__class__"})

#: Job states Galaxy's stop does not act on (``Job.finished``), plus those that can no longer
#: change by themselves (skipped by a workflow condition, already stopped).
FINISHED_JOB_STATES = frozenset({"ok", "error", "deleted", "deleting", "skipped", "stopped"})

HISTORY_ITEM_SOURCES = ("hda", "hdca")
#: Items one delete or restore call changes.
MAX_HISTORY_ITEMS = 500
#: Galaxy's columns for a tag (galaxy.model.Tag.name and ItemTagAssociation.user_value) hold 255 characters.
MAX_TAG_LENGTH = 255
MAX_TAGS = 100
#: Galaxy's tag form in words (its API schema's TagItem decides; operations.galaxy_tags applies it).
TAG_FORM = "tags such as 'qc', 'name:sample1' or 'group:a.b' (no leading '.', no spaces, no ':' first)"
#: Genome builds are short names ('hg38', 'mm10'); Galaxy keeps a dataset's in its metadata, where a
#: megabyte-long one would ride along with every read of the dataset.
MAX_DBKEY_LENGTH = 255
#: Galaxy's history name column (``TrimmedString(255)``) cuts a longer name silently.
MAX_HISTORY_NAME_LENGTH = 255


# ---- rerun: changes over the recorded inputs ----


def merge_changes(
    recorded: Mapping[str, Any], changes: Mapping[str, Any] | None, selectors: Mapping[tuple[str, ...], str]
) -> dict[str, Any]:
    """``changes`` laid over ``recorded`` (both run_tool-shaped), or one [VALIDATION_ERROR] naming each problem.

    ``selectors`` maps the path of each conditional (parameter names from the top, repeat
    indices left out) to the name of its test parameter: when a change gives that parameter
    a new value, the recorded branch is dropped and only the change's parameters are kept
    (Galaxy fills the new branch's defaults).
    """
    if not changes:
        return _copy(dict(recorded))
    problems: list[InputProblem] = []
    nested = _nest_flat_names(changes, "changes", problems)
    merged = _merge(dict(recorded), nested, (), "changes", selectors, problems)
    if problems:
        raise problems_error(
            problems,
            "changes cannot be applied to the job's recorded inputs",
            "Nothing was run.",
            "Read the recorded inputs with get_job_parameters(job_id) and name parameters as they appear there "
            "(nested, or flat as each parameters[].path shows).",
        )
    return merged


def _nest_flat_names(changes: Mapping[str, Any], path: str, problems: list[InputProblem]) -> dict[str, Any]:
    """``{"cond|param": 1}`` -> ``{"cond": {"param": 1}}``, at every level; nested dicts pass through."""
    nested: dict[str, Any] = {}
    for key, value in changes.items():
        if isinstance(value, dict) and not _is_value(value):
            value = _nest_flat_names(value, f"{path}.{key}", problems)
        steps = key.split(SEPARATOR)
        if any(not step for step in steps):
            problems.append(InputProblem(f"{path}.{key}", INVALID_VALUE, f"{key!r} has an empty name in it.",
                                         "Separate names with a single '|', e.g. 'cond|param'."))
            continue
        target = nested
        for step in steps[:-1]:
            inner = target.setdefault(step, {})
            if not isinstance(inner, dict) or _is_value(inner):
                problems.append(_given_twice(f"{path}.{key}", key))
                break
            target = inner
        else:
            last = steps[-1]
            if last not in target:
                target[last] = value
            elif _is_group(value) and _is_group(target[last]) and _disjoint(target[last], value):
                target[last] = _union(target[last], value)
            else:
                problems.append(_given_twice(f"{path}.{key}", key))
    return nested


def _is_group(value: Any) -> bool:
    return isinstance(value, dict) and not _is_value(value)


def _union(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    """Two disjoint groups of parameters as one."""
    union = dict(first)
    for key, value in second.items():
        union[key] = _union(union[key], value) if key in union else value
    return union


def _disjoint(first: dict[str, Any], second: dict[str, Any]) -> bool:
    """Whether two groups of parameters set no parameter twice (at any depth)."""
    return all(
        _is_group(first[key]) and _is_group(second[key]) and _disjoint(first[key], second[key])
        for key in first.keys() & second.keys()
    )


def _given_twice(path: str, key: str) -> InputProblem:
    return InputProblem(path, INVALID_VALUE, f"{key!r} names a parameter that changes already sets another way.",
                        "Give each parameter once, either nested or by its flat name.")


def _merge(
    base: dict[str, Any],
    change: Mapping[str, Any],
    names: tuple[str, ...],
    path: str,
    selectors: Mapping[tuple[str, ...], str],
    problems: list[InputProblem],
) -> dict[str, Any]:
    selector = selectors.get(names)
    if selector is not None and selector in change and change[selector] != base.get(selector):
        base = {}  # a new branch: none of the recorded branch's parameters belong to it
    merged = _copy(base)
    for key, value in change.items():
        block = REPEAT_KEY.fullmatch(key)
        if key not in merged and block and isinstance(merged.get(block.group(1)), list):
            _merge_block(merged, block.group(1), int(block.group(2)), value, names, f"{path}.{key}", selectors, problems)
        elif isinstance(value, dict) and not _is_value(value) and isinstance(merged.get(key), dict) and not _is_value(
            merged[key]
        ):
            merged[key] = _merge(merged[key], value, names + (key,), f"{path}.{key}", selectors, problems)
        else:
            merged[key] = _copy(value)
    return merged


def _merge_block(
    merged: dict[str, Any],
    repeat: str,
    index: int,
    value: Any,
    names: tuple[str, ...],
    path: str,
    selectors: Mapping[tuple[str, ...], str],
    problems: list[InputProblem],
) -> None:
    blocks = merged[repeat]
    if not isinstance(value, dict) or _is_value(value):
        problems.append(InputProblem(path, WRONG_TYPE, f"a repeat block takes parameters by name, got {value!r:.80}.",
                                     f"Pass {{'{repeat}_{index}|<parameter>': <value>}} or a dict of parameters."))
    elif index < len(blocks):
        blocks[index] = _merge(blocks[index], value, names + (repeat,), path, selectors, problems)
    elif index == len(blocks):
        blocks.append(_merge({}, value, names + (repeat,), path, selectors, problems))
    else:
        problems.append(InputProblem(
            path, OUT_OF_RANGE, f"the job ran with {len(blocks)} block(s) of {repeat!r}; block {index} would leave a gap.",
            f"Change blocks {repeat}_0 to {repeat}_{len(blocks) - 1}, add block {repeat}_{len(blocks)}, "
            f"or pass the whole list as {repeat!r}.",
        ))


def _is_value(value: dict[str, Any]) -> bool:
    return bool(_VALUE_KEYS & value.keys())


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _copy(inner) for key, inner in value.items()}
    if isinstance(value, list):
        return [_copy(inner) for inner in value]
    return value


# ---- delete / restore: the items ----


@dataclass(frozen=True)
class HistoryItemRef:
    path: str  # "items[3]"
    src: str  # "hda" or "hdca"
    id: str


def history_item_refs(items: Any) -> list[HistoryItemRef]:
    """``items`` as references, or one [VALIDATION_ERROR] naming every malformed one (nothing is looked up)."""
    if not isinstance(items, list) or not items:
        raise AnalysisError(
            ErrorCode.VALIDATION_ERROR,
            "items must be a non-empty list of {src, id}.",
            'Pass e.g. items=[{"src": "hda", "id": "<dataset id>"}, {"src": "hdca", "id": "<collection id>"}] '
            "with ids from get_history_contents(history_id).",
        )
    if len(items) > MAX_HISTORY_ITEMS:
        raise AnalysisError(
            ErrorCode.VALIDATION_ERROR,
            f"{len(items)} items were given; one call changes at most {MAX_HISTORY_ITEMS}.",
            "Split the items over several calls.",
        )
    refs: list[HistoryItemRef] = []
    problems: list[InputProblem] = []
    seen: dict[tuple[str, str], str] = {}
    for number, item in enumerate(items):
        path = f"items[{number}]"
        if not isinstance(item, dict) or set(item) - {"src", "id"}:
            problems.append(InputProblem(path, WRONG_TYPE, f"expected {{src, id}}, got {item!r:.80}.",
                                         'Write it as {"src": "hda", "id": "<dataset id>"}.'))
            continue
        src, item_id = item.get("src"), item.get("id")
        if src not in HISTORY_ITEM_SOURCES:
            problems.append(InputProblem(path + ".src", INVALID_VALUE, f"src must be 'hda' or 'hdca', got {src!r:.40}.",
                                         "Use 'hda' for a dataset, 'hdca' for a collection.",
                                         HISTORY_ITEM_SOURCES))
        elif not isinstance(item_id, str) or not item_id:
            problems.append(InputProblem(path + ".id", WRONG_TYPE, f"id must be an encoded id, got {item_id!r:.40}.",
                                         "Use an `id` from get_history_contents(history_id)."))
        elif (src, item_id) in seen:
            problems.append(InputProblem(path, INVALID_VALUE, f"the same item as {seen[(src, item_id)]}.",
                                         "Name each item once."))
        else:
            seen[(src, item_id)] = path
            refs.append(HistoryItemRef(path, src, item_id))
    if problems:
        raise problems_error(problems, "items", "Nothing was changed.",
                             "Fix the items listed and call again; ids come from get_history_contents(history_id).")
    return refs


# ---- update_dataset: the fields ----


def dataset_update(
    *,
    name: str | None = None,
    file_type: str | None = None,
    dbkey: str | None = None,
    info: str | None = None,
    annotation: str | None = None,
    tags: Sequence[str] | None = None,
    visible: bool | None = None,
) -> dict[str, Any]:
    """The fields asked for, as Galaxy's dataset update payload keys, the datatype last
    (Galaxy commits and starts the metadata job when it sets the datatype)."""
    check_storable(name=name, file_type=file_type, dbkey=dbkey, info=info, annotation=annotation)
    if tags is not None:
        _check_tags(tags)
    if dbkey is not None and (not dbkey.strip() or len(dbkey) > MAX_DBKEY_LENGTH):
        raise AnalysisError(
            ErrorCode.VALIDATION_ERROR,
            f"dbkey must be a genome build name of 1 to {MAX_DBKEY_LENGTH} characters (got {len(dbkey)}).",
            "Pass a build such as 'hg38' or 'mm10', or '?' for unknown.",
        )
    payload = _asked_for(
        {
            "name": name,
            "genome_build": dbkey,
            "info": info,
            "annotation": annotation,
            "tags": tags,
            "visible": visible,
            "datatype": file_type,
        },
        "name, file_type, dbkey, info, annotation, tags, visible",
        'update_dataset(dataset_id, name="reads.tsv", file_type="tabular")',
    )
    if name is not None and not name.strip():
        raise AnalysisError(ErrorCode.VALIDATION_ERROR, "name is empty.", "Give the dataset a name with visible text.")
    return payload


def collection_update(
    *, name: str | None = None, tags: Sequence[str] | None = None, visible: bool | None = None
) -> dict[str, Any]:
    """The fields of ``update_collection`` asked for, as Galaxy's collection update payload keys,
    checked with the rules of ``dataset_update``."""
    check_storable(name=name)
    if tags is not None:
        _check_tags(tags)
    payload = _asked_for({"name": name, "tags": tags, "visible": visible}, "name, tags, visible",
                         'update_collection(collection_id, name="trimmed reads", tags=["name:run1"])')
    if name is not None and not name.strip():
        raise AnalysisError(ErrorCode.VALIDATION_ERROR, "name is empty.",
                            "Give the collection a name with visible text.")
    return payload


def history_update(
    *, name: str | None = None, annotation: str | None = None, tags: Sequence[str] | None = None
) -> dict[str, Any]:
    """The fields of ``update_history`` asked for, as Galaxy's history update payload keys, checked with
    the rules of ``dataset_update``; a name Galaxy would cut is refused; annotation "" removes the annotation."""
    check_storable(name=name, annotation=annotation)
    if tags is not None:
        _check_tags(tags)
    payload = _asked_for({"name": name, "annotation": annotation, "tags": tags}, "name, annotation, tags",
                         'update_history(history_id, name="AMR isolates", tags=["name:amr"])')
    if annotation == "":
        payload["annotation"] = None  # Galaxy's deserializer removes the annotation on None
    if name is not None and (not name.strip() or len(name) > MAX_HISTORY_NAME_LENGTH):
        raise AnalysisError(
            ErrorCode.VALIDATION_ERROR,
            f"name must have visible text and at most {MAX_HISTORY_NAME_LENGTH} characters (got {len(name)}).",
            "Give the history a short name, e.g. 'AMR isolates 2026-11'.",
        )
    return payload


def _asked_for(fields: dict[str, Any], names: str, example: str) -> dict[str, Any]:
    """The fields given (tags as a list), or a [VALIDATION_ERROR] naming those that could be."""
    payload = {key: list(value) if key == "tags" else value for key, value in fields.items() if value is not None}
    if not payload:
        raise AnalysisError(
            ErrorCode.VALIDATION_ERROR, f"Nothing to change: give at least one of {names}.", f"E.g. {example}."
        )
    return payload


def _check_tags(tags: Sequence[str]) -> None:
    if len(tags) > MAX_TAGS:
        raise AnalysisError(ErrorCode.VALIDATION_ERROR, f"{len(tags)} tags were given; at most {MAX_TAGS}.",
                            "Keep the tags that help find the dataset again.")
    for tag in tags:
        if not tag.strip() or len(tag) > MAX_TAG_LENGTH or "\x00" in tag:
            raise AnalysisError(
                ErrorCode.VALIDATION_ERROR,
                f"tag {tag[:40]!r} is empty, longer than {MAX_TAG_LENGTH} characters or holds a NUL character.",
                "Use short tags such as 'name:sample1' or 'qc'; tags=[] removes every tag.",
            )


# ---- cancel_job ----


def cancellable(state: str) -> bool:
    """Whether cancelling a job in ``state`` still changes anything (paused jobs can be cancelled)."""
    return state not in FINISHED_JOB_STATES
