"""Every ``<tests>`` case of every corpus tool (test/corpus), through /api/mcp as an agent sends it.

Each case is built by Galaxy's own test-case model (``toolbox_check.tool_test_cases``, as check-toolbox
builds it), its data files uploaded from test/corpus/test-data with the datatype and genome build the
test names. Then, for the nested form and Galaxy's flat form of each case: check_tool_inputs says valid,
run_tool runs it (every job is submitted first and all are waited for together), the job ends ok,
and get_job_parameters reads back exactly the values sent. For each parameter a case gives, one
generated mutation (a value outside its options, range or type; a misspelled name where the value
has no such bounds) is refused by check_tool_inputs and by run_tool naming its path, and the history
holds no more jobs afterwards.
"""

import concurrent.futures
import copy
import json
import queue
import re
import time

import pytest

from conftest import CORPUS_CONF, fetch, wait_for_dataset
from galaxy_mcp_analysis.core import tool_inputs as rules
from galaxy_mcp_analysis.testing import (
    error_text,
    McpClient,
    rest,
)
from galaxy_mcp_analysis.toolbox_check import (
    tool_files,
    tool_parameters,
    tool_test_cases,
)

TEST_DATA = CORPUS_CONF.parent / "test-data"
WORKERS = 4
FOREIGN = "zz_not_an_option"
_STEP = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]")


def corpus_cases() -> list[tuple[str, int, list, dict]]:
    """(tool id, case number, Galaxy's parameter models, the case's nested state) of every corpus case."""
    from galaxy.tool_util.parser import get_tool_source

    cases = []
    for path in tool_files([CORPUS_CONF]):
        source = get_tool_source(str(path))
        parameters = tool_parameters(source)
        cases += [(source.parse_id(), number, parameters, state) for number, state in tool_test_cases(source, parameters)]
    return cases


class CaseData:
    """The test's data files uploaded once each (per datatype and genome build), collections built from them."""

    def __init__(self, galaxy, mcp, api_key, history_id):
        self.galaxy, self.mcp, self.key, self.history = galaxy, mcp, api_key, history_id
        self.datasets: dict[tuple, str] = {}
        self.collections: dict[str, str] = {}

    def dataset(self, file: dict) -> str:
        ext = file.get("filetype") or file["path"].rsplit(".", 1)[-1]
        key = (file["path"], ext, file.get("dbkey") or "?")
        if key not in self.datasets:
            element = {"src": "pasted", "paste_content": (TEST_DATA / file["path"]).read_text(), "ext": ext,
                       "name": file["path"], **({"dbkey": file["dbkey"]} if file.get("dbkey") else {})}
            self.datasets[key] = fetch(self.galaxy, self.key, self.history, element, wait=False)["id"]
        return self.datasets[key]

    def collection(self, value: dict) -> str:
        key = json.dumps(value, sort_keys=True)
        if key not in self.collections:
            self.collections[key] = self.mcp.call_ok(
                "create_collection", history_id=self.history, collection_type=value["collection_type"],
                element_identifiers=self._elements(value["elements"]), api_key=self.key)["collection_id"]
        return self.collections[key]

    def _elements(self, elements: list) -> list:
        return [{"name": element["identifier"], "src": "new_collection", "collection_type": element["collection_type"],
                 "element_identifiers": self._elements(element["elements"])}
                if element.get("class") == "Collection" else
                {"name": element["identifier"], "src": "hda", "id": self.dataset(element)} for element in elements]

    def request(self, state):
        """The case's state with each test file as a dataset reference and each collection as one."""
        if isinstance(state, dict) and state.get("class") == "File":
            return {"src": "hda", "id": self.dataset(state)}
        if isinstance(state, dict) and state.get("class") == "Collection":
            return {"src": "hdca", "id": self.collection(state)}
        if isinstance(state, dict):
            return {key: self.request(value) for key, value in state.items()}
        if isinstance(state, list):
            return [self.request(value) for value in state]
        return state

    def wait(self):
        for dataset_id in self.datasets.values():
            assert wait_for_dataset(self.galaxy, self.key, dataset_id)["state"] == "ok", dataset_id


@pytest.fixture(scope="module")
def corpus(galaxy, mcp, api_key):
    history = mcp.call_ok("create_history", name="corpus cases", api_key=api_key)["id"]
    data = CaseData(galaxy, mcp, api_key, history)
    cases = [(tool_id, number, parameters, data.request(state)) for tool_id, number, parameters, state in corpus_cases()]
    data.wait()
    clients: queue.Queue = queue.Queue()
    for _ in range(WORKERS):
        clients.put(McpClient(galaxy.mcp_url))
    yield {"galaxy": galaxy, "key": api_key, "history": history, "cases": cases, "clients": clients}
    while not clients.empty():
        clients.get().close()
    rest(galaxy.galaxy_url, f"/api/histories/{history}", api_key, {"purge": True}, method="DELETE")


def in_parallel(corpus, work, items) -> list:
    """``work(client, item)`` for each item over the pooled MCP clients."""
    def one(item):
        client = corpus["clients"].get()
        try:
            return work(client, item)
        finally:
            corpus["clients"].put(client)

    with concurrent.futures.ThreadPoolExecutor(WORKERS) as pool:
        return list(pool.map(one, items))


def jobs_in(corpus) -> int:
    return len(rest(corpus["galaxy"].galaxy_url, f"/api/jobs?history_id={corpus['history']}&limit=1000", corpus["key"]))


# ---- Sent and recorded ------------------------------------------------------------------------------


def sent_values(request: dict, parameters: list) -> list[tuple[str, object, object]]:
    """(path, parameter, value) of every value a case gives, in the branches it selects."""
    return list(rules.leaf_values(request, parameters))


def at(state, path: str):
    for name, index in _STEP.findall(path.removeprefix("inputs")):
        if not isinstance(state, (dict, list)):
            return None
        state = state[int(index)] if index else state.get(name)
    return state


def same(parameter, sent, recorded) -> bool:
    """Is ``recorded`` the value ``sent`` means to Galaxy? Data by their ids; a multiple's comma string as
    its list; a data column's label ``c2`` as 2 (Galaxy's reading, reported in ``normalised``); numbers by
    value; booleans and text exactly."""
    if isinstance(sent, dict) and "src" in sent or isinstance(sent, list) and sent and isinstance(sent[0], dict):
        references = sent if isinstance(sent, list) else [sent]
        return all(reference["id"] in json.dumps(recorded) for reference in references)
    if (getattr(parameter, "multiple", False) or parameter.parameter_type == "gx_drill_down") and isinstance(sent, str):
        sent = sent.split(",")  # Galaxy records a drill-down's choice as a list, even of one
    if isinstance(sent, list) or isinstance(recorded, list):
        return isinstance(sent, list) and isinstance(recorded, list) and len(sent) == len(recorded) and all(
            same_scalar(parameter, a, b) for a, b in zip(sent, recorded))
    return same_scalar(parameter, sent, recorded)


def same_scalar(parameter, sent, recorded) -> bool:
    if isinstance(sent, bool) or isinstance(recorded, bool):
        return sent is recorded
    if parameter.parameter_type in ("gx_integer", "gx_float", "gx_data_column") and isinstance(sent, str):
        sent = sent.strip().removeprefix("c") if parameter.parameter_type == "gx_data_column" else sent
        sent = float(sent) if re.fullmatch(r"[+-]?\d+(\.\d*)?", sent.strip()) else sent
    if isinstance(sent, (int, float)) and isinstance(recorded, (int, float)):
        return float(sent) == float(recorded)
    return sent == recorded


# ---- Valid cases ------------------------------------------------------------------------------------


def forms(corpus):
    """(label, tool id, inputs sent, nested request, parameters) of each case in both forms."""
    for tool_id, number, parameters, request in corpus["cases"]:
        yield f"{tool_id} test {number} nested", tool_id, request, request, parameters
        yield f"{tool_id} test {number} flat", tool_id, rules.nested_to_flat(request, parameters), request, parameters


def test_every_case_runs_as_sent_in_both_forms(corpus, record_testsuite_property):
    started = time.monotonic()
    history, key = corpus["history"], corpus["key"]
    items = list(forms(corpus))

    def submit(client, item):
        label, tool_id, inputs, _, _ = item
        checked = client.call_ok("check_tool_inputs", history_id=history, tool_id=tool_id, inputs=inputs, api_key=key)
        if not checked["valid"]:
            return f"{label}: check_tool_inputs refused: {checked['errors']}", None
        result = client.call("run_tool", {"history_id": history, "tool_id": tool_id, "inputs": inputs, "api_key": key})
        if result.is_error or len(result.structured_content["jobs"]) != 1:
            return f"{label}: run_tool: {error_text(result)[:400] if result.is_error else result.structured_content}", None
        answer = result.structured_content
        if checked["unchecked"] or answer["unchecked"]:
            return f"{label}: left unchecked: {checked['unchecked']} / {answer['unchecked']}", None
        return None, answer["jobs"][0]["id"]

    submitted = in_parallel(corpus, submit, items)
    failures = [failure for failure, _ in submitted if failure]
    job_ids = [job_id for _, job_id in submitted if job_id]
    submitted_at = time.monotonic()
    client = corpus["clients"].get()
    try:
        states = {}
        deadline = time.monotonic() + 300
        while len(states) < len(job_ids) and time.monotonic() < deadline:
            waiting = [job_id for job_id in job_ids if job_id not in states]
            waited = client.call_ok("wait_for_jobs", job_ids=waiting, timeout_seconds=60, api_key=key)
            states |= {job["job_id"]: job["state"] for job in waited["jobs"] if job["state"] in ("ok", "error", "deleted")}
    finally:
        corpus["clients"].put(client)

    def compare(client, pair):
        (label, _, _, request, parameters), (_, job_id) = pair
        if job_id is None:
            return []
        if states.get(job_id) != "ok":
            return [f"{label}: job {job_id} ended {states.get(job_id)}"]
        recorded = client.call_ok("get_job_parameters", job_id=job_id, api_key=key)["inputs"]
        return [f"{label}: {path}: sent {value!r}, recorded {at(recorded, path)!r}"
                for path, parameter, value in sent_values(request, parameters)
                if not same(parameter, value, at(recorded, path))]

    for found in in_parallel(corpus, compare, list(zip(items, submitted))):
        failures += found
    values = sum(len(sent_values(request, parameters)) for _, _, _, request, parameters in items)
    elapsed = time.monotonic() - started
    print(f"\ncorpus cases: {len(items)} requests ({len(corpus['cases'])} cases x 2 forms), {len(job_ids)} jobs, "
          f"{values} values compared; submitted in {submitted_at - started:.0f} s, all in {elapsed:.0f} s")
    record_testsuite_property("tool_corpus_requests", len(items))
    record_testsuite_property("tool_corpus_seconds", round(elapsed))
    assert not failures, f"{len(failures)} disagreements:\n" + "\n".join(failures)
    assert len(job_ids) == len(items) >= 50


# ---- Mutations --------------------------------------------------------------------------------------


def misspelled(name: str) -> str:
    return name[:-1] + name[-1] * 2


def mutation(parameter, value):
    """A value Galaxy would refuse for this parameter (against a validator, outside its options, range or type),
    or None where only a misspelled name is sure to be wrong."""
    kind = parameter.parameter_type
    for validator in getattr(parameter, "validators", None) or []:  # the ones Galaxy's model carries
        if getattr(validator, "negate", False):
            continue
        if validator.type == "regex":
            return "zz does not match"
        if validator.type == "in_range":
            return validator.max + 1 if validator.max is not None else validator.min - 1
        if validator.type == "length" and validator.max is not None:
            return "x" * (validator.max + 1)
        if validator.type == "empty_field":
            return ""
    if kind in ("gx_select", "gx_drill_down", "gx_genomebuild"):  # static or computed from the request's data
        return [FOREIGN] if getattr(parameter, "multiple", False) else FOREIGN
    if kind == "gx_color":
        return "zz_not_a_colour"
    if kind in ("gx_integer", "gx_float"):
        high = getattr(parameter, "max", None)
        return high + 1 if high is not None else "zz_not_a_number"
    if kind == "gx_boolean":
        return "zz_not_a_boolean"
    if kind == "gx_data_column":
        return "zz_not_a_column"
    return None


def replaced(request: dict, path: str, value=None, rename: str | None = None) -> dict:
    changed = copy.deepcopy(request)
    *steps, (last, _) = _STEP.findall(path.removeprefix("inputs"))
    target = changed
    for name, index in steps:
        target = target[int(index)] if index else target[name]
    if rename is None:
        target[last] = value
    else:
        target[rename] = target.pop(last)
    return changed


def mutations(corpus):
    """(label, tool id, inputs, path that must be named): one per value given, half in the flat form."""
    made = []
    for tool_id, number, parameters, request in corpus["cases"]:
        for path, parameter, value in sent_values(request, parameters):
            wrong = mutation(parameter, value)
            if wrong is not None:
                label, changed, named = f"{path}={wrong!r}", replaced(request, path, wrong), path
            else:
                name = path.rsplit(".", 1)[-1]
                label, changed = f"{path} misspelled", replaced(request, path, rename=misspelled(name))
                named = f"{path.rsplit('.', 1)[0]}.{misspelled(name)}"
            sent = rules.nested_to_flat(changed, parameters) if len(made) % 2 else changed
            made.append((f"{tool_id} test {number}: {label} ({'flat' if len(made) % 2 else 'nested'})", tool_id,
                         sent, named))
    return made


def test_a_mutation_of_each_value_is_refused_naming_its_path_and_runs_nothing(corpus, record_testsuite_property):
    started = time.monotonic()
    history, key = corpus["history"], corpus["key"]
    made = mutations(corpus)
    before = jobs_in(corpus)

    def refused(client, item):
        label, tool_id, inputs, path = item
        checked = client.call_ok("check_tool_inputs", history_id=history, tool_id=tool_id, inputs=inputs, api_key=key)
        if checked["valid"] or path not in {error["path"] for error in checked["errors"]}:
            return f"{label}: check_tool_inputs did not name {path}: {checked['errors']}"
        error = client.call_error("run_tool", history_id=history, tool_id=tool_id, inputs=inputs, api_key=key)
        if not error.startswith("[VALIDATION_ERROR]") or f"- {path}:" not in error:
            return f"{label}: run_tool answered {error[:400]}"
        return None

    failures = [failure for failure in in_parallel(corpus, refused, made) if failure]
    after = jobs_in(corpus)
    elapsed = time.monotonic() - started
    names = sum("misspelled" in label for label, *_ in made)
    print(f"\ncorpus mutations: {len(made)} ({len(made) - names} values, {names} misspelled names) checked and run "
          f"in {elapsed:.0f} s; jobs in the history {before} -> {after}")
    record_testsuite_property("tool_corpus_mutations", len(made))
    assert not failures, f"{len(failures)} mutations not refused:\n" + "\n".join(failures)
    assert after == before, f"{after - before} jobs created by refused requests"
    assert len(made) >= 60
