"""What an agent needs from a finished job: bounded log excerpts and the silent-failure rule.

Logs: a job's stderr can be megabytes. The cause of a failure is usually at the
end (the last error before exit) and the context at the start (versions, the
command's first complaints), so a long log keeps its head and its tail and drops
the middle, with one marker line saying how many bytes went. Budgets count UTF-8
bytes, not characters, and a cut never splits a character.

Silent failure: a job can finish ``ok`` and still have produced nothing, e.g.
``tool ... | tee log`` where the pipe swallows the tool's exit code. An empty output
alone is no evidence of that: a filter that rightly keeps no rows, or any step whose
input is already empty, writes an empty output too, and a rerun cannot change it. So a
0-byte output of an ``ok`` job is suspect only when the job itself complained: the tool
wrote to stderr, or Galaxy recorded a warning on the job (a tolerated exit code). Every
empty output says why it is or is not suspect (``why``), and the verdict names the
evidence it rests on (``JobEvidence.fields``); the same evidence always gives the same
verdict, so a chain of steps on an empty input is judged alike at every step. Never
suspect, whatever the logs say:

- *optional* outputs, declared with a ``<filter>``: produced only when a
  parameter asks for them (unmatched reads, a discard log), and empty is often
  the right answer there;
- *discovered* datasets, and the primary dataset of an output that discovers
  datasets: the tool decides at run time which files to write, and the primary
  is often a placeholder;
- outputs of a job whose every data input is empty: empty in, empty out.

Visibility does not matter (the element datasets of a mapped run are hidden),
an output whose size is unknown (purged, never stored) is never empty, and an output
that failed on its own (an upload's datatype check: ``failed_outputs``) is judged by
its state, not its size.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from galaxy_mcp_analysis.core.errors import InvalidInput

#: Smallest useful ``max_bytes`` for a log: room for the marker line and some of each end.
MIN_LOG_BYTES = 256
#: Share of a truncated log's budget kept from its start; the rest goes to the end.
HEAD_SHARE = 1 / 3


class LogBudgetError(InvalidInput):
    """A ``max_bytes`` for logs the agent can fix."""


@dataclass(frozen=True)
class LogExcerpt:
    text: str
    dropped_bytes: int  # bytes of the middle replaced by the marker line

    @property
    def truncated(self) -> bool:
        return self.dropped_bytes > 0


def log_budget(requested: int, cap: int) -> tuple[int, bool]:
    """``(applied, capped)``: the per-log byte budget, at least MIN_LOG_BYTES and at most ``cap``."""
    if isinstance(requested, bool) or not isinstance(requested, int) or requested < MIN_LOG_BYTES:
        raise LogBudgetError(f"max_bytes must be an integer >= {MIN_LOG_BYTES}, got {requested!r}")
    cap = max(cap, MIN_LOG_BYTES)
    return min(requested, cap), requested > cap


def excerpt(text: str | None, max_bytes: int) -> LogExcerpt:
    """``text`` whole if its UTF-8 form fits ``max_bytes``, else its head and tail around a marker line.

    The excerpt's UTF-8 form is never longer than ``max_bytes`` (marker included),
    and ``dropped_bytes`` is exactly what is missing between head and tail.
    """
    if max_bytes < MIN_LOG_BYTES:
        raise LogBudgetError(f"max_bytes must be at least {MIN_LOG_BYTES}, got {max_bytes}")
    data = (text or "").encode("utf-8", errors="replace")
    if len(data) <= max_bytes:
        return LogExcerpt(data.decode("utf-8"), 0)
    # Size the marker for the largest possible count; the real one is never longer.
    room = max_bytes - len(_marker(len(data)))
    head_end = _char_start_at_or_before(data, int(room * HEAD_SHARE))
    tail_start = _char_start_at_or_after(data, len(data) - (room - int(room * HEAD_SHARE)))
    dropped = tail_start - head_end
    return LogExcerpt(data[:head_end].decode("utf-8") + _marker(dropped) + data[tail_start:].decode("utf-8"), dropped)


def _marker(dropped: int) -> str:
    return f"\n[... {dropped} bytes dropped from the middle of this log ...]\n"


def _is_continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


def _char_start_at_or_before(data: bytes, index: int) -> int:
    while 0 < index < len(data) and _is_continuation(data[index]):
        index -= 1
    return index


def _char_start_at_or_after(data: bytes, index: int) -> int:
    while index < len(data) and _is_continuation(data[index]):
        index += 1
    return index


@dataclass(frozen=True)
class JobOutput:
    """One dataset a job wrote, as plain data."""

    name: str  # as the job records it: the tool's output name, or Galaxy's name for an element/discovered file
    dataset_id: str
    size: int | None  # bytes; None when unknown (purged, not stored)
    optional: bool = False  # declared with a <filter>: produced on request, may rightly be empty
    discovered: bool = False  # written at the tool's discretion (discover_datasets)
    failed: bool = False  # the dataset itself failed (error, failed_metadata): its state says so, not its size


@dataclass(frozen=True)
class JobEvidence:
    """What a finished job shows besides its outputs: the evidence an empty output is judged on."""

    exit_code: int | None = None
    tool_stderr_bytes: int = 0
    warnings: tuple[str, ...] = ()  # Galaxy's job_messages (a tolerated exit code, a matched stdio regex)
    input_sizes: tuple[int | None, ...] = ()  # each data input's size in bytes; None when unknown

    @property
    def inputs_empty(self) -> bool:
        return bool(self.input_sizes) and all(size == 0 for size in self.input_sizes)

    @property
    def complained(self) -> bool:
        return self.tool_stderr_bytes > 0 or bool(self.warnings)

    def fields(self) -> dict[str, Any]:
        return {
            "exit_code": self.exit_code,
            "tool_stderr_bytes": self.tool_stderr_bytes,
            "job_messages": list(self.warnings),
            "input_sizes": list(self.input_sizes),
        }


def evidence_of(
    exit_code: int | None, tool_stderr: str | None, job_messages: list | None, input_sizes: Iterable[int | None]
) -> JobEvidence:
    """A job's evidence from what Galaxy records: its exit code, tool stderr (counted in UTF-8 bytes), job
    messages (each its ``desc``) and its data inputs' sizes."""
    return JobEvidence(
        exit_code=exit_code,
        tool_stderr_bytes=len((tool_stderr or "").encode("utf-8", errors="replace")),
        warnings=tuple(str(message.get("desc") or message) for message in job_messages or []),
        input_sizes=tuple(input_sizes),
    )


@dataclass(frozen=True)
class OutputVerdict:
    empty_outputs: list[dict[str, Any]]
    suspected_silent_failure: bool
    evidence: dict[str, Any] | None = None  # what the verdict rests on; None when there is nothing to judge


def judge_outputs(job_state: str, outputs: Iterable[JobOutput], evidence: JobEvidence) -> OutputVerdict:
    """The silent-failure rule: an ``ok`` job that complained and left an output it had to produce empty.

    Empty outputs are only reported for ``ok`` jobs: a queued or running job's
    outputs are empty because they are not written yet, and a failed job's
    failure is already its state.
    """
    if job_state != "ok":
        return OutputVerdict([], False)
    described = [_describe_empty(output, evidence) for output in outputs if output.size == 0 and not output.failed]
    if not described:
        return OutputVerdict([], False)
    return OutputVerdict(described, any(not entry["may_be_empty"] for entry in described), evidence.fields())


def _describe_empty(output: JobOutput, evidence: JobEvidence) -> dict[str, Any]:
    if output.optional:
        may_be_empty, why = True, "optional output (the tool declares it with a filter)"
    elif output.discovered:
        may_be_empty, why = True, "discovered dataset (the tool chooses at run time which files to write)"
    elif evidence.inputs_empty:
        may_be_empty, why = True, "every data input of the job is empty too (empty in, empty out; a rerun gives the same)"
    elif evidence.complained:
        said = f"wrote {evidence.tool_stderr_bytes} bytes to stderr" if evidence.tool_stderr_bytes else "has a warning"
        may_be_empty, why = False, f"the tool {said} (see tool_stderr, job_messages) and left this output empty"
    else:
        code = "no exit code" if evidence.exit_code is None else f"exit code {evidence.exit_code}"
        may_be_empty, why = True, (
            f"{code}, nothing on stderr, no warning: an empty result can be right (a filter that kept no rows); "
            "if not, compare get_job_parameters with the input (peek_dataset_content)"
        )
    return {
        "name": output.name,
        "dataset_id": output.dataset_id,
        "size": output.size,
        "may_be_empty": may_be_empty,
        "why": why,
    }


# Galaxy records a discovered dataset as "__new_primary_file_<output>|<designation>__"
# and an element of a statically structured output collection as "<output>|__part__|<element>".
_DISCOVERED = re.compile(r"^__new_primary_file_(?P<output>[^|]+)\|.*__$")
_COLLECTION_PART = "|__part__|"


def declared_output(association_name: str) -> tuple[str, bool]:
    """``(tool output name, discovered)`` for the name a job's output association carries."""
    if match := _DISCOVERED.match(association_name):
        return match.group("output"), True
    return association_name.split(_COLLECTION_PART, 1)[0], False


#: A stderr line that names a cause: the words tools and runtimes use for one.
_CAUSE_WORDS = re.compile(
    r"error|exception|not found|no such|cannot|can't|could not|couldn't|unable to|failed|invalid|denied|missing"
    r"|fatal|abort|killed|segmentation fault|out of memory|unrecognized|unknown|illegal|not allowed|usage:",
    re.IGNORECASE,
)
#: Lines that say a failure happened but never why (Galaxy's own exit-code line, a traceback's frames).
_NO_CAUSE = re.compile(
    r"^(Fatal error: Exit code \d+ \(.*\)|Traceback \(most recent call last\):|File \".*\", line \d+.*|\^+|~+)$"
)
#: Characters of a quoted cause line at most (a minified JSON error can be one huge line).
MAX_CAUSE_CHARS = 300


def cause_line(stderr: str | None) -> str | None:
    """The stderr line that names a failure's cause: the last line with a cause word (a runtime's last error
    comes after its context, a traceback's exception after its frames), else the last line that is not
    boilerplate; None for an empty log. Galaxy's "Fatal error: Exit code" line and traceback frames never."""
    lines = [line.strip() for line in (stderr or "").splitlines()]
    lines = [line for line in lines if line and not _NO_CAUSE.match(line)]
    if not lines:
        return None
    chosen = next((line for line in reversed(lines) if _CAUSE_WORDS.search(line)), lines[-1])
    return chosen if len(chosen) <= MAX_CAUSE_CHARS else chosen[:MAX_CAUSE_CHARS] + "..."


#: When the job engine, not the tool, ended a job, what it leaves behind: Galaxy's job runners' messages in
#: the job's info (the Slurm plugin's for a TIMEOUT or OUT_OF_MEMORY state) or the engine's own line in the
#: job's stderr (slurmstepd's "CANCELLED ... DUE TO TIME LIMIT"); ``lost``: Galaxy's Pulsar runner's message for a
#: job its Pulsar server could no longer account for (a restart while it ran). Cause -> phrases, case-insensitive.
ENGINE_CAUSES = {
    "time_limit": ("ran longer than the maximum allowed job run time", "due to time limit", "walltime"),
    "memory_limit": ("insufficient memory", "out_of_memory", "oom-kill"),
    "lost": ("could not determine this job's state",),
}


def engine_cause(*logs: str | None) -> str | None:
    """The engine's reason for ending a job ("time_limit", "memory_limit", "lost") named in any of ``logs``, or None."""
    text = "\n".join(log for log in logs if log).lower()
    return next((cause for cause, phrases in ENGINE_CAUSES.items() if any(p in text for p in phrases)), None)
