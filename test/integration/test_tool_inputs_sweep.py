"""The preflight agrees with Galaxy over every tool of the served toolbox (sqlite pass only).

(a) Each tool's own <tests> cases (Galaxy's test-case model, ``test_case_state``): their test
    data files are not shipped in galaxy-app, so each file becomes a small synthetic dataset of
    its declared (or suffix) datatype, each collection one built by create_collection; each case
    must pass check_tool_inputs, and, for the default version, run_tool must create jobs; a case making
    one job has that job's recorded parameters compared with the case as in (b) (values the preflight
    sent in another form, its `normalised`, as sent). The cases this cannot use are named in
    UNUSABLE_TEST_CASES.
(b) Requests generated from each tool's get_tool_input_schema (the defaults, each select option,
    each conditional branch, each repeat at min and min+1 blocks) pass the check, and, for the
    default version, run_tool creates one job whose record Galaxy returns (``/api/jobs/{id}?full=true``)
    agrees with what was sent, as job_records.py lists: each sent scalar by its recorded text,
    each repeat's number of blocks, each dataset by the job's input of that name, each list of
    datasets by the job's inputs in order and number, each collection by its database id.
    Values Galaxy adds (defaults of what was not sent) are not compared.
(c) Mutations of those requests (an unknown name at each level, an out-of-range integer, a
    foreign select value, a parameter moved into another branch, a dataset of a type the input
    does not accept) are refused with the path named, by the check and (default versions) by
    run_tool; no job is created by any of them (the history's job count is compared).

A request the check refuses on its data (options computed from the datasets given, Galaxy's own dry run) is
sent to Galaxy's ``/api/tools`` as well: Galaxy must refuse it too, or record another value than the one sent
at each refused path (an old profile's optional select without options drops the value: a silent change the
preflight refuses). The inputs' uploads are waited for; the runs' jobs are not: Galaxy records a job's
parameters when it creates it. The history is purged at the end, which cancels what is still queued.
"""

import concurrent.futures
import queue
import threading
import time

import pytest

from conftest import id_encoding
from job_records import (
    disagreements,
    leaves,
    recorded,
)
from tool_requests import (
    filled,
    flat,
    Inputs,
    mutations,
    replace_test_files,
    variants,
)

from galaxy_mcp_analysis.core.populated_values import replaced_at
from galaxy_mcp_analysis.testing import (
    error_text,
    McpClient,
    rest,
)
from galaxy_mcp_analysis.testing.client import McpToolError

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
#: The tools' own <tests> cases the sweep cannot use, each with why. Any other case Galaxy's test-case model
#: refuses or the sweep cannot build fails the test, and so does a case named here that no longer is refused or
#: unbuildable (so the table stays true).
UNUSABLE_TEST_CASES = {
    "__MERGE_COLLECTION__ 1.0.0 test 6": ("Galaxy refuses", "the test sets advanced|conflict|suffix_pattern beside "
                                          "duplicate_options=keep_last, a branch without that parameter"),
    "MAF_filter 1.0.1 test 1": ("Galaxy refuses", "the test names species2 and the species1_* parameters flatly; "
                                "they sit in the maf_filters repeat (species2 in a repeat inside it)"),
    "__EXTRACT_DATASET__ 1.0.2 test 3": ("not buildable", "a 'record' collection, which create_collection does "
                                         "not build"),
}
#: Tool versions no request can be generated for, with why; any other fails the test, as does one named here
#: that gets requests.
WITHOUT_GENERATED_REQUESTS = dict.fromkeys(
    ("__CONVERT_SAMPLE_SHEET__ 1.0.0", "__SAMPLE_SHEET_TO_TABULAR__ 1.0.0"),
    "a sample_sheet collection input, which create_collection does not build")
WORKERS = 4


def judged_on_data(error: dict) -> bool:
    """A refusal Galaxy made against the request's data (the dry run), or options computed from it: none, or
    values read from the data given (the stand-in's, which are not the test file's)."""
    return error["rule"] == "invalid_value" or (error["rule"] == "not_an_option" and (
        error.get("valid_values") == [] or "(read from the data given as " in error["message"]))


def galaxy_creates_jobs(galaxy, api_key: str, history_id: str, tool_id: str, sent: dict) -> list[str]:
    """Galaxy's own verdict on a request (``POST /api/tools``: flat names as they are, the nested form as
    ``21.01``): the ids of the jobs it made, none when it refused."""
    import urllib.error

    payload = {"tool_id": tool_id, "history_id": history_id, "inputs": sent}
    if not any("|" in name for name in sent):
        payload["input_format"] = "21.01"
    try:
        answer = rest(galaxy.galaxy_url, "/api/tools", api_key, payload, method="POST", timeout=300)
    except urllib.error.HTTPError:
        return []
    return [job["id"] for job in answer.get("jobs", [])]


def served_tool_sources():
    from galaxy.tool_util.parser import get_tool_source

    from galaxy_mcp_analysis.serve.toolbox import default_toolbox

    return [get_tool_source(str(path)) for path in default_toolbox().served]


def requests_from_tool_tests(source, inputs: Inputs):
    """(label, outcome, request or why not) of each of a tool's <tests> cases; outcome: built, Galaxy refuses
    (its own test-case model) or not buildable (an item create_dataset_from_text or create_collection refuses)."""
    from galaxy.tool_util.parameters import (
        input_models_for_tool_source,
        test_case_state,
    )

    parameters = input_models_for_tool_source(source).parameters
    for number, test in enumerate(source.parse_tests_to_dict()["tests"]):
        label = f"{source.parse_id()} {source.parse_version()} test {number + 1}"
        try:
            state = test_case_state(test, parameters, source.parse_profile()).tool_state.input_state
        except Exception as error:  # Galaxy's model raises plain Exceptions; UNUSABLE_TEST_CASES bounds them
            yield label, "Galaxy refuses", str(error)
            continue
        try:
            yield label, "built", replace_test_files(state, inputs)
        except McpToolError as error:
            yield label, "not buildable", str(error)


def unlisted_exclusions(unusable: dict[str, str], without_requests: list[str]) -> list[str]:
    """Each test case or tool version left out that the tables do not name, or named but not left out."""
    named = {label: outcome for label, (outcome, _) in UNUSABLE_TEST_CASES.items()}
    found = [f"{label}: {unusable.get(label, 'used')}, UNUSABLE_TEST_CASES says {named.get(label, 'used')}"
             for label in sorted(set(unusable) | set(named)) if unusable.get(label) != named.get(label)]
    found += [f"{version}: {'no' if version in without_requests else 'some'} generated requests, "
              f"WITHOUT_GENERATED_REQUESTS {'names' if version in WITHOUT_GENERATED_REQUESTS else 'lacks'} it"
              for version in sorted(set(without_requests) ^ set(WITHOUT_GENERATED_REQUESTS))]
    return found


# ---- The sweep ------------------------------------------------------------------------------------


@pytest.mark.sweep
def test_the_preflight_agrees_with_galaxy_over_the_whole_toolbox(galaxy, mcp, api_key, record_testsuite_property):
    started = time.monotonic()
    history_id = mcp.call_ok("create_history", name="tool inputs sweep", api_key=api_key)["id"]
    inputs = Inputs(galaxy, mcp, api_key, history_id)
    counts = dict.fromkeys(
        ("tools", "tool_versions", "modelled", "test_cases", "test_cases_galaxy_refuses", "test_cases_not_buildable",
         "test_cases_checked", "test_cases_run", "test_cases_compared", "generated", "generated_jobs",
         "values_compared", "mutations", "mutations_refused", "tool_versions_without_buildable_inputs", "runs_refused_on_content",
         "checks_refused_on_content", "refused_for_reference_data", "galaxy_changes_silently"), 0)
    failures: list[str] = []
    checks: list[tuple] = []  # (kind, label, tool_id, version, sent, expected, is_default)
    unusable: dict[str, str] = {}  # test case label -> "Galaxy refuses" | "not buildable"
    without_requests: list[str] = []  # tool versions no request could be generated for
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
        for label, outcome, request in requests_from_tool_tests(source, inputs):
            counts["test_cases"] += 1
            counts["test_cases_galaxy_refuses"] += outcome == "Galaxy refuses"
            counts["test_cases_not_buildable"] += outcome == "not buildable"
            if outcome == "built":
                checks.append(("test", label, tool_id, version, request, request, is_default))
            else:
                unusable[label] = outcome
                print(f"  {outcome}: {label}: {request[:160]}")

        # (b) generated requests, (c) mutations
        try:
            base = filled(schema, inputs)
            generated = [("defaults", base), *variants(schema, base, inputs)]
            refused = list(mutations(schema, base, inputs))
        except McpToolError as error:  # e.g. sample_sheet inputs: create_collection does not build those
            counts["tool_versions_without_buildable_inputs"] += 1
            without_requests.append(f"{tool_id} {version}")
            print(f"  no generated requests for {tool_id} {version}: {str(error)[:160]}")
            continue
        for number, (label, request) in enumerate(generated):
            sent = flat(request, schema) if number % 2 else request  # half in Galaxy's flat form
            checks.append(("generated", f"{tool_id} {version} {label}", tool_id, version, sent, request, is_default))
        for label, request, path in refused:
            checks.append(("mutation", f"{tool_id} {version} {label}", tool_id, version, request, path, is_default))
    # The inputs' uploads settle first: tools that filter a collection's elements by state refuse pending ones
    # ([NOT_READY]), and Galaxy lets any select value through while an input is not yet ok.
    for _ in range(10):
        if mcp.call_ok("wait_for_jobs", history_id=history_id, timeout_seconds=60, api_key=api_key)["all_terminal"]:
            break
    jobs_before_runs = len(rest(galaxy.galaxy_url, f"/api/jobs?history_id={history_id}&limit=1000", api_key))
    built_at = time.monotonic()

    compared_lock = threading.Lock()
    decode = id_encoding(galaxy).decode_id
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
                    # A value judged against the data: run_tool must refuse it too, and so must Galaxy itself.
                    if is_default:
                        error = client.call_error("run_tool", history_id=history_id, tool_id=tool_id, inputs=sent,
                                                  api_key=api_key)
                        if not error.startswith("[VALIDATION_ERROR]"):
                            return kind, "wrong", [f"{label}: checked invalid, run_tool answered {error[:300]}"], 0
                        if jobs := galaxy_creates_jobs(galaxy, api_key, history_id, tool_id, sent):
                            # Galaxy ran it: the refusal holds only where Galaxy would have recorded another value
                            # than the one sent (an old profile's optional select drops a value it has no option for).
                            job = rest(galaxy.galaxy_url, f"/api/jobs/{jobs[0]}?full=true", api_key)
                            changed = disagreements(expected, recorded(job), job["inputs"], decode)
                            kept = [e["path"] for e in check["errors"]
                                    if not any(c.startswith(f"{e['path']}:") for c in changed)]
                            if kept:
                                return kind, "wrong", [f"{label}: refused on the data ({check['errors']}), but "
                                                       f"Galaxy's /api/tools ran it as sent at {kept}"], len(jobs)
                            return kind, "content checked, Galaxy changes it", [], len(jobs)
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
            made = len(answer["jobs"])
            if kind == "test" and (made != 1 or answer["mapped_over"]):
                return kind, "run", [], made  # a test that maps over: its jobs' records are not compared
            # values the preflight sent in another form (its `normalised`: "c2" as 2) are compared as sent
            expected = replaced_at(expected, {entry["path"]: entry["sent"] for entry in check.get("normalised", ())})
            if made != 1 or answer["mapped_over"]:  # the comparison reads one job's record
                return kind, "wrong", [f"{label}: one job expected (datasets sent to dataset inputs), {made} made, "
                                       f"mapped over {answer['mapped_over']}"], made
            # Galaxy records a job's parameters when it creates it: read them back at once.
            job = rest(galaxy.galaxy_url, f"/api/jobs/{answer['jobs'][0]['id']}?full=true", api_key)
            problems = disagreements(expected, recorded(job), job["inputs"], decode)
            if not problems:
                with compared_lock:
                    counts["values_compared"] += sum(1 for _ in leaves(expected))
                    counts["test_cases_compared"] += kind == "test"
            return kind, "run", [f"{label}: {problem}" for problem in problems], len(answer["jobs"])
        finally:
            clients.put(client)

    created_jobs = 0
    with concurrent.futures.ThreadPoolExecutor(WORKERS) as pool:
        for item, (kind, outcome, problems, jobs) in zip(checks, pool.map(one, checks)):
            created_jobs += jobs
            failures += problems
            on_data = outcome in ("content", "content checked", "content checked, Galaxy changes it")
            counts["runs_refused_on_content"] += on_data
            counts["galaxy_changes_silently"] += outcome == "content checked, Galaxy changes it"
            counts["refused_for_reference_data"] += on_data and item[2] in REFERENCE_DATA_TOOLS
            counts["checks_refused_on_content"] += outcome.startswith("content checked")
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
    failures += unlisted_exclusions(unusable, without_requests)
    for failure in failures:
        print(f"  DISAGREEMENT {failure[:400]}")
    assert not failures, f"{len(failures)} disagreements:\n" + "\n".join(failures[:40])
    assert jobs_before_runs == len(inputs.datasets), counts
    # upload1: Galaxy models no upload
    assert counts["tools"] >= 90 and counts["modelled"] == counts["tool_versions"] - 1
    assert set(REFERENCE_DATA_TOOLS) <= set(default_versions), set(REFERENCE_DATA_TOOLS) - set(default_versions)
    assert counts["test_cases_checked"] >= 80 and counts["mutations_refused"] == counts["mutations"] >= 75
    assert counts["generated_jobs"] >= 90 and counts["test_cases_run"] >= 70 and counts["test_cases_compared"] >= 60
    assert counts["runs_refused_on_content"] - counts["refused_for_reference_data"] <= len(CONTENT_DEPENDENT)

