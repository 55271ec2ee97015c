"""Issue 15: the preflight agrees with Galaxy over every tool of the served toolbox (sqlite pass only).

(a) Each tool's own <tests> cases (Galaxy's test-case model, ``test_case_state``): their test
    data files are not shipped in galaxy-app, so each file becomes a small synthetic dataset of
    its declared (or suffix) datatype, each collection one built by create_collection; each case
    must pass check_tool_inputs, and, for the default version, run_tool creates its jobs.
(b) Requests generated from each tool's get_tool_input_schema (the defaults, each select option,
    each conditional branch, each repeat at min and min+1 blocks) pass the check, run_tool
    creates their jobs, and each job's parameters read back from Galaxy are the values sent.
(c) Mutations of those requests (an unknown name at each level, an out-of-range integer, a
    foreign select value, a parameter moved into another branch, a dataset of a type the input
    does not accept) are refused with the path named, and nothing is created.

Jobs are not waited for: Galaxy records a job's parameters when it creates it. The history is
purged at the end, which cancels what is still queued.
"""

import concurrent.futures
import copy
import json
import queue
import threading
import time

import pytest

from galaxy_mcp_analysis.testing import (
    error_text,
    McpClient,
    rest,
)
from galaxy_mcp_analysis.testing.client import McpToolError

SYNTHETIC = {
    "txt": "line one\nline two\n",
    "tabular": "a\t1\nb\t2\n",
    "bed": "chr1\t10\t20\tr1\t0\t+\nchr1\t30\t40\tr2\t0\t-\n",
    "fasta": ">s1\nACGT\n",
    "fastqsanger": "@r1\nACGT\n+\nIIII\n",
    "sam": "@HD\tVN:1.0\nr1\t0\tchr1\t1\t0\t4M\t*\t0\t0\tACGT\tIIII\n",
    "png": "not a png\n",
}
#: A test file's datatype from its suffix when the test declares none (Galaxy's test runner sniffs those;
#: the synthetic text files are tabular, which every txt input accepts too).
SUFFIXES = {"fa": "fasta", "tab": "tabular", "tsv": "tabular", "txt": "tabular"}
#: Runs Galaxy refuses because of the datasets' content, which the synthetic data cannot reproduce: either
#: when it populates the request (check_tool_inputs asks Galaxy too, so the dry run refuses them as
#: `invalid_value` and run_tool must refuse them as well) or while executing the tool. Any other refusal
#: is a disagreement.
CONTENT_DEPENDENT = {
    "__APPLY_RULES__ 1.1.0 defaults": "empty rules: Galaxy needs column definitions to apply them",
    "__MERGE_COLLECTION__ 1.0.0 advanced.conflict.duplicate_options=fail": "'fail' fails on the duplicate "
    "identifiers of the two synthetic lists, by design",
    "__RELABEL_FROM_FILE__ 1.1.0 test 3": "column 3 of the test's mapping file; the synthetic file has 2 columns",
    "__RELABEL_FROM_FILE__ 1.1.0 test 4": "the test's mapping file lists other identifiers",
    "__SORTLIST__ 1.0.0 test 1": "the test's sort file lists the collection's identifiers",
    "sort1 1.2.0 test 3": "column 9 of the test's a.tab; the synthetic table has 2 columns",
    "__TAG_FROM_FILE__ 1.0.0 test 2": "the test's tags file names the collection's identifiers",
    "__SORTLIST__ 1.0.0 sort_type.sort_type=file": "the sort file must list the collection's identifiers",
    **{f"Count1 1.0.3 test {n}": "column 3 of the test's table; the synthetic table has 2 columns" for n in (3, 4, 5)},
    **{f"join1 2.1.3 test {n}": "column 4 of the test's table; the synthetic table has 2 columns" for n in (5, 6, 7)},
}
#: Tools every request of which Galaxy judges against data the synthetic datasets and this server lack (a
#: MAF's species metadata, a genome build, options listed from the dataset's own content, reference data
#: tables): each of their refusals must be such a judgement (Galaxy's own, or options computed from the
#: request's datasets that offer none), never a type or name refusal.
REFERENCE_DATA_TOOLS = {
    **dict.fromkeys(("MAF_To_BED1", "MAF_To_Interval1", "MAF_To_Fasta1", "MAF_Thread_For_Species1",
                     "MAF_Limit_To_Species1", "maf_by_block_number1", "MAF_Reverse_Complement_1", "MAF_filter"),
                    "species are listed from the MAF's metadata; the synthetic MAF has none"),
    **dict.fromkeys(("maf_stats1", "Interval_Maf_Merged_Fasta2", "GeneBed_Maf_Fasta2", "Interval2Maf_pairwise1"),
                    "the input needs a genome build and the alignments are a reference data table this Galaxy lacks"),
    "aggregate_scores_in_intervals2": "the scores are a reference data table this Galaxy lacks",
    "Extract_features1": "the features are listed from the dataset's own column values",
    "gff_filter_by_feature_count": "the feature names are listed from the GFF's own content",
}
UNKNOWN = "zz_not_a_parameter"
WORKERS = 4


def judged_on_data(error: dict) -> bool:
    """A refusal Galaxy made against the request's data (the dry run), or options computed from it that offer none."""
    return error["rule"] == "invalid_value" or (error["rule"] == "not_an_option" and error.get("valid_values") == [])


def served_tool_sources():
    from galaxy.tool_util.parser import get_tool_source

    from galaxy_mcp_analysis.serve.toolbox import default_toolbox

    return [get_tool_source(str(path)) for path in default_toolbox().served]


class Inputs:
    """Synthetic datasets (one per datatype) and collections (one per shape), shared by the whole sweep."""

    def __init__(self, galaxy, mcp, api_key, history_id):
        self.galaxy, self.mcp, self.api_key, self.history_id = galaxy, mcp, api_key, history_id
        self.datasets: dict[str, str] = {}
        self.collections: dict[str, str] = {}

    def dataset(self, ext: str) -> str:
        if ext in ("data", "input"):
            ext = "txt"
        if ext not in self.datasets:
            self.datasets[ext] = self.mcp.call_ok(
                "create_dataset_from_text", history_id=self.history_id, content=SYNTHETIC.get(ext, "x\n"),
                file_type=ext, name=f"synthetic.{ext}", api_key=self.api_key)["dataset_id"]
        return self.datasets[ext]

    def collection(self, collection_type: str, identifiers=None, ext="txt") -> str:
        key = json.dumps([collection_type, identifiers, ext])
        if key not in self.collections:
            self.collections[key] = self.mcp.call_ok(
                "create_collection", history_id=self.history_id, collection_type=collection_type, api_key=self.api_key,
                element_identifiers=self._elements(collection_type, identifiers, ext))["collection_id"]
        return self.collections[key]

    def _elements(self, collection_type, identifiers, ext):
        outer, _, inner = collection_type.partition(":")
        names = identifiers or {"paired": ["forward", "reverse"], "paired_or_unpaired": ["unpaired"]}.get(
            outer, ["e1", "e2"])
        if not inner:
            return [{"name": name, "src": "hda", "id": self.dataset(ext)} for name in names]
        return [{"name": name, "src": "new_collection", "collection_type": inner,
                 "element_identifiers": self._elements(inner, None, ext)} for name in names]

    def from_test_file(self, value: dict) -> dict:
        """A test case's {"class": "File"|"Collection", ...} as a reference to a synthetic item."""
        if value.get("class") == "File":
            suffix = value.get("path", "x.txt").rsplit(".", 1)[-1]
            return {"src": "hda", "id": self.dataset(value.get("filetype") or SUFFIXES.get(suffix, suffix))}
        return {"src": "hdca", "id": self.mcp.call_ok(
            "create_collection", history_id=self.history_id, collection_type=value["collection_type"],
            api_key=self.api_key, element_identifiers=self._test_elements(value["elements"]))["collection_id"]}

    def _test_elements(self, elements):
        result = []
        for element in elements:
            if element.get("class") == "Collection":
                result.append({"name": element["identifier"], "src": "new_collection",
                               "collection_type": element["collection_type"],
                               "element_identifiers": self._test_elements(element["elements"])})
            else:
                result.append({"name": element["identifier"], **self.from_test_file(element)})
        return result


def replace_test_files(value, inputs: Inputs):
    if isinstance(value, dict):
        if value.get("class") in ("File", "Collection"):
            return inputs.from_test_file(value)
        return {key: replace_test_files(inner, inputs) for key, inner in value.items()}
    if isinstance(value, list):
        return [replace_test_files(inner, inputs) for inner in value]
    return value


# ---- Requests generated from a schema ----------------------------------------------------------


def accepted_types(description: str) -> list[str]:
    return [part.strip() for part in description.split(" of type ", 1)[1].split(",")]


def filled(schema: dict, inputs: Inputs):
    """A valid value for a schema: its default, its first option or branch, a synthetic dataset."""
    if "oneOf" in schema:  # a conditional: its first branch
        return filled({"type": "object", **schema["oneOf"][0]}, inputs)
    if schema.get("type") == "object" and "src" in schema.get("properties", {}):
        kinds = schema["properties"]["src"]["enum"]
        if "hdca" in kinds:
            types = accepted_types(schema["description"])
            return {"src": "hdca", "id": inputs.collection("list" if types == ["any"] else types[0])}
        return {"src": "hda", "id": inputs.dataset(accepted_types(schema["description"])[0])}
    if schema.get("type") == "object":
        return {name: filled(inner, inputs) for name, inner in schema.get("properties", {}).items()}
    if schema.get("type") == "array" and "properties" in schema.get("items", {}):
        if "src" in schema["items"]["properties"]:  # a multiple data input: the array names the types
            return [filled({"description": schema["description"], **schema["items"]}, inputs)]
        return [filled(schema["items"], inputs) for _ in range(schema.get("minItems", 0))]
    if "default" in schema and schema["default"] != "":
        return schema["default"]
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    if schema.get("format") == "uri":
        return "http://127.0.0.1/"
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "array" and schema.get("items"):  # a multiple select or column: one value
        return [filled(schema["items"], inputs)]
    # "e1": the first element of every synthetic collection (a text naming an element must name one)
    return {"integer": max(schema.get("minimum", 1), 1), "number": 1.5, "string": "e1", "boolean": True,
            "array": []}.get(kind)


def variants(schema: dict, base: dict, inputs: Inputs, at=()):
    """(label, request): each select option, each conditional branch, each repeat at min and min+1."""
    for name, inner in schema.get("properties", {}).items():
        here = at + (name,)
        if "enum" in inner:
            for option in inner["enum"]:
                yield f"{'.'.join(here)}={option}", set_at(base, here, option)
        elif inner.get("type") == "array" and "enum" in inner.get("items", {}):
            for option in inner["items"]["enum"]:
                yield f"{'.'.join(here)}=[{option}]", set_at(base, here, [option])
        elif "oneOf" in inner:
            for branch in inner["oneOf"]:
                value = filled({"type": "object", **branch}, inputs)
                test_name = next(iter(branch["properties"]))
                request = set_at(base, here, value)
                yield f"{'.'.join(here)}.{test_name}={value[test_name]}", request
                yield from variants(branch, request, inputs, here)
        elif inner.get("type") == "object" and "src" not in inner.get("properties", {}):
            yield from variants(inner, base, inputs, here)
        elif inner.get("type") == "array" and "properties" in inner.get("items", {}) and \
                "src" not in inner["items"]["properties"]:
            low = inner.get("minItems", 0)
            for count in (low, low + 1):
                if count <= inner.get("maxItems", count):
                    yield f"{'.'.join(here)}[{count} blocks]", set_at(
                        base, here, [filled(inner["items"], inputs) for _ in range(count)])


def set_at(request: dict, path, value) -> dict:
    changed = copy.deepcopy(request)
    target = changed
    for name in path[:-1]:
        target = target[name]
    target[path[-1]] = value
    return changed


def mutations(schema: dict, base: dict, inputs: Inputs, at=()):
    """(label, request, path that must be named) of requests the preflight must refuse."""
    here_path = "inputs" + "".join(f".{name}" for name in at)
    yield f"unknown name in {here_path}", set_at(base, at + (UNKNOWN,), 1) if at else {**base, UNKNOWN: 1}, \
        f"{here_path}.{UNKNOWN}"
    for name, inner in schema.get("properties", {}).items():
        here = at + (name,)
        path = f"{here_path}.{name}"
        if "enum" in inner:
            yield f"foreign option {path}", set_at(base, here, "zz_not_an_option"), path
        elif inner.get("type") in ("integer", ["integer", "null"]) and "minimum" in inner:
            yield f"below minimum {path}", set_at(base, here, inner["minimum"] - 1), path
        elif "oneOf" in inner:
            first, *others = inner["oneOf"]
            test_name = next(iter(first["properties"]))
            for other in others:
                moved = [n for n in other["properties"] if n != test_name and n not in first["properties"]]
                if moved:
                    request = set_at(base, here + (moved[0],), filled(other["properties"][moved[0]], inputs))
                    yield f"{moved[0]} moved out of its branch", request, f"{path}.{moved[0]}"
                    break
            yield from mutations(first, base, inputs, here)
        elif inner.get("type") == "object" and "src" in inner.get("properties", {}):
            if "hda" in inner["properties"]["src"]["enum"] and "data" not in accepted_types(inner["description"]):
                yield f"wrong datatype {path}", set_at(base, here, {"src": "hda", "id": inputs.dataset("png")}), path
        elif inner.get("type") == "object" and inner.get("additionalProperties") is False:
            yield from mutations(inner, base, inputs, here)
        elif inner.get("type") == "array" and "src" not in inner.get("items", {}).get("properties", {"src": 1}):
            block = filled(inner["items"], inputs)
            request = set_at(base, here, [block])
            yield f"unknown name in a block of {path}", set_at(request, here, [{**block, UNKNOWN: 1}]), \
                f"{path}[0].{UNKNOWN}"


def flat(request: dict, schema: dict, prefix="") -> dict:
    """Galaxy's flat form of a generated request (conditionals and sections as 'a|b', repeats as 'r_0|b')."""
    result = {}
    for name, value in request.items():
        inner = schema.get("properties", {}).get(name, {})
        if "oneOf" in inner:
            branch = next(b for b in inner["oneOf"] if all(k in b["properties"] for k in value))
            result.update(flat(value, branch, f"{prefix}{name}|"))
        elif inner.get("type") == "object" and "src" not in inner.get("properties", {}):
            result.update(flat(value, inner, f"{prefix}{name}|"))
        elif inner.get("type") == "array" and "src" not in inner.get("items", {}).get("properties", {"src": 1}):
            for index, block in enumerate(value):
                result.update(flat(block, inner["items"], f"{prefix}{name}_{index}|"))
        else:
            result[f"{prefix}{name}"] = value
    return result


# ---- Comparing a job's recorded parameters with what was sent ----------------------------------


def recorded(job: dict) -> dict:
    """A job's parameters as Galaxy recorded them: nested, bookkeeping keys dropped."""
    def clean(value):
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items() if not k.startswith("__")}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value

    params = {}
    for key, value in job["params"].items():
        try:
            params[key] = clean(json.loads(value))
        except (TypeError, ValueError):
            params[key] = value
    return params


def disagreements(sent, stored, job_inputs, path="inputs"):
    """Every sent value Galaxy did not record as sent (data references by id; scalars by text)."""
    found = []
    if isinstance(sent, dict) and sent.get("src") == "hdca":  # recorded with its database id: check it is there
        values = stored.get("values") if isinstance(stored, dict) else None
        if not (values and values[0].get("src") == "hdca"):
            found.append(f"{path}: collection sent, {stored!r} recorded")
    elif isinstance(sent, dict) and "src" in sent:
        ids = {item["id"] for item in job_inputs.values()}
        if sent["id"] not in ids:
            found.append(f"{path}: {sent['id']} not among the job's inputs")
    elif isinstance(sent, dict):
        for name, value in sent.items():
            if not isinstance(stored, dict) or (name not in stored and not _is_dataset(value)):
                found.append(f"{path}.{name}: not recorded")
            else:
                found += disagreements(value, stored.get(name), job_inputs, f"{path}.{name}")
    elif isinstance(sent, list) and sent and isinstance(sent[0], dict) and "src" not in sent[0]:
        if not isinstance(stored, list) or len(stored) != len(sent):
            found.append(f"{path}: {len(sent)} blocks sent, {stored!r} recorded")
        else:
            for index, (block, kept) in enumerate(zip(sent, stored)):
                found += disagreements(block, kept, job_inputs, f"{path}[{index}]")
    elif isinstance(sent, list):
        if _text(sent) != _text(stored) and not all(_is_data(v) for v in sent):
            found.append(f"{path}: sent {sent!r}, recorded {stored!r}")
    elif not _same_scalar(sent, stored) and not (sent is None and stored in ("", None, "None")):
        found.append(f"{path}: sent {sent!r}, recorded {stored!r}")
    return found


def _is_data(value):
    return isinstance(value, dict) and "src" in value


def _is_dataset(value):
    return _is_data(value) and value["src"] != "hdca"


def _same_scalar(sent, stored) -> bool:
    """Equal as Galaxy's recorded text, or as numbers (a float recorded as '0.0' where 0.0 was sent)."""
    if _text(sent) == _text(stored):
        return True
    if isinstance(sent, (int, float)) and not isinstance(sent, bool):
        try:
            return float(stored) == float(sent)
        except (TypeError, ValueError):
            return False
    return False


def _text(value):
    if isinstance(value, list):
        return [_text(v) for v in value]
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "" if value is None else str(value)


# ---- The sweep ------------------------------------------------------------------------------------


@pytest.mark.sweep
def test_the_preflight_agrees_with_galaxy_over_the_whole_toolbox(galaxy, mcp, api_key, record_testsuite_property):
    from galaxy.tool_util.parameters import (
        input_models_for_tool_source,
        test_case_state,
    )

    started = time.monotonic()
    history_id = mcp.call_ok("create_history", name="tool inputs sweep", api_key=api_key)["id"]
    inputs = Inputs(galaxy, mcp, api_key, history_id)
    counts = dict.fromkeys(
        ("tools", "tool_versions", "modelled", "test_cases", "test_cases_galaxy_refuses", "test_cases_not_buildable",
         "test_cases_checked", "test_cases_run", "generated", "generated_jobs", "values_compared", "mutations",
         "mutations_refused", "tool_versions_without_buildable_inputs", "runs_refused_on_content",
         "checks_refused_on_content", "refused_for_reference_data"), 0)
    failures: list[str] = []
    checks: list[tuple] = []  # (kind, label, tool_id, version, sent, expected, is_default)
    sources = served_tool_sources()
    default_versions = {}
    for source in sources:
        tool_id = source.parse_id()
        answer = mcp.call_ok("get_tool_input_schema", tool_id=tool_id, api_key=api_key)
        default_versions[tool_id] = answer["tool_version"]
    counts["tools"] = len(default_versions)

    # Every request is built first (uploads and collections shared), then checked and run concurrently.
    for source in sources:
        tool_id, version = source.parse_id(), source.parse_version()
        is_default = default_versions[tool_id] == version
        counts["tool_versions"] += 1
        answer = mcp.call_ok("get_tool_input_schema", tool_id=tool_id, tool_version=version, api_key=api_key)
        counts["modelled"] += answer["modelled"]
        if not answer["modelled"]:
            continue
        schema = answer["schema"]

        # (a) the tool's own tests
        parameters = input_models_for_tool_source(source).parameters
        for number, test in enumerate(source.parse_tests_to_dict()["tests"]):
            counts["test_cases"] += 1
            label = f"{tool_id} {version} test {number + 1}"
            try:
                state = test_case_state(test, parameters, source.parse_profile()).tool_state.input_state
            except Exception:  # Galaxy's own test-case model refuses it (a test naming a parameter loosely)
                counts["test_cases_galaxy_refuses"] += 1
                continue
            try:
                request = replace_test_files(state, inputs)
            except Exception as error:  # e.g. a record or sample_sheet collection create_collection does not build
                counts["test_cases_not_buildable"] += 1
                print(f"  not buildable: {label}: {str(error)[:120]}")
                continue
            checks.append(("test", label, tool_id, version, request, None, is_default))

        # (b) generated requests, (c) mutations
        try:
            base = filled(schema, inputs)
            generated = [("defaults", base), *variants(schema, base, inputs)]
            refused = list(mutations(schema, base, inputs))
        except McpToolError as error:  # sample_sheet inputs: create_collection does not build those
            counts["tool_versions_without_buildable_inputs"] += 1
            print(f"  no generated requests for {tool_id} {version}: {str(error)[:160]}")
            continue
        for number, (label, request) in enumerate(generated):
            sent = flat(request, schema) if number % 2 else request  # half in Galaxy's flat form
            checks.append(("generated", f"{tool_id} {version} {label}", tool_id, version, sent, request, is_default))
        for label, request, path in refused:
            checks.append(("mutation", f"{tool_id} {version} {label}", tool_id, version, request, path, is_default))
    jobs_before_runs = len(rest(galaxy.galaxy_url, f"/api/jobs?history_id={history_id}&limit=1000", api_key))
    built_at = time.monotonic()

    compared_lock = threading.Lock()
    clients: queue.Queue = queue.Queue()
    for _ in range(WORKERS):
        clients.put(McpClient(galaxy.mcp_url))

    def one(item) -> tuple[str, str, list[str], int]:
        """(kind, outcome, problems, jobs created) of one check, and of its run where it should run."""
        kind, label, tool_id, version, sent, expected, is_default = item
        client = clients.get()
        try:
            check = client.call_ok("check_tool_inputs", history_id=history_id, tool_id=tool_id, tool_version=version,
                                   inputs=sent, api_key=api_key)
            if kind == "mutation":
                if check["valid"] or expected not in {error["path"] for error in check["errors"]}:
                    return kind, "wrong", [f"{label}: not refused at {expected}: {check['errors']}"], 0
                if is_default:
                    error = client.call_error("run_tool", history_id=history_id, tool_id=tool_id, inputs=sent,
                                              api_key=api_key)
                    if not error.startswith("[VALIDATION_ERROR]") or f"- {expected}:" not in error:
                        return kind, "wrong", [f"{label}: run_tool answered {error[:300]}"], 0
                return kind, "refused", [], 0
            if not check["valid"]:
                if (label in CONTENT_DEPENDENT or tool_id in REFERENCE_DATA_TOOLS) and all(
                        map(judged_on_data, check["errors"])):
                    # The dry run asked Galaxy, which judged a value against the data: run_tool must refuse it too.
                    if is_default:
                        error = client.call_error("run_tool", history_id=history_id, tool_id=tool_id, inputs=sent,
                                                  api_key=api_key)
                        if not error.startswith("[VALIDATION_ERROR]"):
                            return kind, "wrong", [f"{label}: checked invalid, run_tool answered {error[:300]}"], 0
                    return kind, "content checked", [], 0
                return kind, "wrong", [f"{label}: refused: {check['errors']}"], 0
            if not is_default:  # run_tool runs a tool's default version only
                return kind, "checked", [], 0
            result = client.call("run_tool", {"history_id": history_id, "tool_id": tool_id, "inputs": sent,
                                              "api_key": api_key})
            if result.is_error:
                text = error_text(result)
                # Galaxy's own refusal against the data, surfaced as a validation error: never a server error,
                # and never the preflight's (its "Tool '...' cannot run" refusals must agree with the check).
                on_data = label in CONTENT_DEPENDENT or tool_id in REFERENCE_DATA_TOOLS
                galaxys = text.startswith("[VALIDATION_ERROR]") and not text.startswith("[VALIDATION_ERROR] Tool '")
                if on_data and galaxys:
                    return kind, "content", [], 0
                return kind, "wrong", [f"{label}: run_tool failed: {error_text(result)[:300]}"], 0
            answer = result.structured_content
            if not answer["jobs"] or answer.get("errors"):
                return kind, "wrong", [f"{label}: no job created: {answer.get('errors')}"], 0
            if kind == "test":
                return kind, "run", [], len(answer["jobs"])
            # Galaxy records a job's parameters when it creates it: read them back at once.
            job = rest(galaxy.galaxy_url, f"/api/jobs/{answer['jobs'][0]['id']}?full=true", api_key)
            problems = disagreements(expected, recorded(job), job["inputs"])
            if not problems:
                with compared_lock:
                    counts["values_compared"] += sum(1 for _ in _leaves(expected))
            return kind, "run", [f"{label}: {problem}" for problem in problems], len(answer["jobs"])
        finally:
            clients.put(client)

    created_jobs = 0
    with concurrent.futures.ThreadPoolExecutor(WORKERS) as pool:
        for item, (kind, outcome, problems, jobs) in zip(checks, pool.map(one, checks)):
            created_jobs += jobs
            failures += problems
            counts["runs_refused_on_content"] += outcome in ("content", "content checked")
            on_data = outcome in ("content", "content checked")
            counts["refused_for_reference_data"] += on_data and item[2] in REFERENCE_DATA_TOOLS
            counts["checks_refused_on_content"] += outcome == "content checked"
            if kind == "test":
                counts["test_cases_checked"] += 1
                counts["test_cases_run"] += outcome == "run" and not problems
            elif kind == "generated":
                counts["generated"] += 1
                counts["generated_jobs"] += outcome == "run" and not problems
            else:
                counts["mutations"] += 1
                counts["mutations_refused"] += outcome == "refused"
    while not clients.empty():
        clients.get().close()
    jobs_after = len(rest(galaxy.galaxy_url, f"/api/jobs?history_id={history_id}&limit=1000", api_key))
    if jobs_after - jobs_before_runs != created_jobs:
        failures.append(f"jobs created: {jobs_after - jobs_before_runs}, run_tool reported {created_jobs}")
    rest(galaxy.galaxy_url, f"/api/histories/{history_id}", api_key, {"purge": True}, method="DELETE")

    # Only the uploads of the synthetic datasets made jobs before the checks.
    counts["jobs_from_building"] = jobs_before_runs
    print(f"\ntool inputs sweep ({time.monotonic() - started:.0f} s; building {built_at - started:.0f} s): "
          + ", ".join(f"{key} {value}" for key, value in counts.items()))
    for key, value in counts.items():
        record_testsuite_property(f"tool_inputs_sweep_{key}", value)
    for failure in failures:
        print(f"  DISAGREEMENT {failure[:400]}")
    assert not failures, f"{len(failures)} disagreements:\n" + "\n".join(failures[:40])
    assert jobs_before_runs == len(inputs.datasets), counts
    # upload1: Galaxy models no upload
    assert counts["tools"] >= 90 and counts["modelled"] == counts["tool_versions"] - 1
    assert set(REFERENCE_DATA_TOOLS) <= set(default_versions), set(REFERENCE_DATA_TOOLS) - set(default_versions)
    assert counts["test_cases_checked"] >= 80 and counts["mutations_refused"] == counts["mutations"] >= 75
    assert counts["generated_jobs"] >= 90 and counts["test_cases_run"] >= 70
    assert counts["runs_refused_on_content"] - counts["refused_for_reference_data"] <= len(CONTENT_DEPENDENT)


def _leaves(value):
    if isinstance(value, dict) and "src" not in value:
        for inner in value.values():
            yield from _leaves(inner)
    elif isinstance(value, list) and value and isinstance(value[0], dict) and "src" not in value[0]:
        for inner in value:
            yield from _leaves(inner)
    else:
        yield value
