"""A job as a listing or a wait reads it: the few columns each row needs, as plain records.

``list_jobs`` and ``wait_for_jobs`` build one row per job from its state, its outputs (name, dataset, the
dataset's state, size and visibility) and its output collections. Read as columns (``operations.jobs.loading``)
those cost a fraction of loading each job, association, dataset and file record as an object; the rules
that read them (the failed outputs, the hidden outputs, whether the silent-failure rule has anything to
judge) work on these records alone.
"""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import (
    Generic,
    TypeVar,
)

from galaxy_mcp_analysis.core.waiting import WAIT_ENDS

#: States of a job that ended. Only an ended job's outputs can have been replaced where they were: Galaxy's remap
#: and rerun_job's replace_outputs take a job that ended; nothing reruns a queued, running or paused job in place.
ENDED_STATES = WAIT_ENDS - {"paused"}
#: Output states that make an output failed on its own (an upload's datatype check, metadata), whatever its job's.
FAILED_OUTPUT_STATES = ("error", "failed_metadata")


@dataclass(frozen=True)
class OutputRecord:
    """One output dataset of a job, as its association and dataset record it."""

    name: str  # the association's name (the tool's output name, or Galaxy's for an element or discovered file)
    dataset_id: int | None  # the dataset (decoded id); None when the association has none
    state: str | None = None  # the dataset's state as Galaxy reports it (instance_state)
    size: int | None = None  # bytes; None when unknown (purged, not stored): dataset_size
    visible: bool = True
    history_id: int | None = None
    hid: int | None = None

    @property
    def failed(self) -> bool:
        return self.dataset_id is not None and self.state in FAILED_OUTPUT_STATES


@dataclass(frozen=True)
class JobRecord:
    """A job with its outputs: what one row of a job listing or a wait reads."""

    id: int
    state: str
    tool_id: str
    tool_version: str | None = None
    exit_code: int | None = None
    create_time: datetime | None = None
    update_time: datetime | None = None
    history_id: int | None = None
    dynamic_tool_id: int | None = None
    outputs: tuple[OutputRecord, ...] = ()
    collections: tuple[tuple[str, int], ...] = ()  # (name, collection id) of each output collection

    @property
    def hidden_outputs(self) -> bool:
        """Whether any output is hidden: a replaced output is, so only then is ``replaced_by`` worth asking
        for a job nothing flagged (an ok job whose wrong result was replaced where it was)."""
        return any(output.dataset_id is not None and not output.visible for output in self.outputs)

    @property
    def has_ended(self) -> bool:
        """Whether the job ended (ENDED_STATES): only then can something have replaced its outputs (replaced_by)."""
        return self.state in ENDED_STATES

    @property
    def failed_outputs(self) -> list[int]:
        """The outputs that failed on their own (decoded ids), in order."""
        return [output.dataset_id for output in self.outputs if output.failed]

    @property
    def has_empty_output(self) -> bool:
        """Whether the silent-failure rule has anything to judge: an ok job with an output of 0 bytes that did not
        fail on its own (core.job_logs.judge_outputs judges only those; without one its verdict is clean)."""
        return self.state == "ok" and any(
            output.dataset_id is not None and output.size == 0 and not output.failed for output in self.outputs
        )


def outputs_of(job: JobRecord, encode_id: Callable[[int], str]) -> list[dict[str, str]]:
    """The job's outputs by name, each a dataset_id or a collection_id (encoded), datasets first."""
    outputs = [{"name": output.name, "dataset_id": encode_id(output.dataset_id)} for output in job.outputs]
    outputs += [{"name": name, "collection_id": encode_id(collection)} for name, collection in job.collections]
    return outputs


def total_from_page(offset: int, limit: int, listed: int) -> int | None:
    """How many items a listing holds over all its pages, when one page of ``listed`` items says it: a page short
    of ``limit`` is the last one, unless it is empty past the start (the listing may end before ``offset``).
    None when only a count can say."""
    if listed < limit and (listed or not offset):
        return offset + listed
    return None


def instance_state(own_state: str | None, dataset_state: str | None) -> str | None:
    """A dataset's state as Galaxy reports it: the history item's own (set only for metadata states), else its
    file record's."""
    return own_state or dataset_state


def dataset_size(item_purged: bool | None, file_purged: bool | None, file_size: Decimal | int | None) -> int | None:
    """A dataset's size in bytes (Galaxy stores a Decimal); None when unknown: purged, or never measured."""
    return None if item_purged or file_purged or file_size is None else int(file_size)


Key = TypeVar("Key")
Value = TypeVar("Value")


class Memo(Generic[Key, Value]):
    """``function`` answered once per argument: an id encoded once per call however many rows name it."""

    def __init__(self, function: Callable[[Key], Value]):
        self.function = function
        self.known: dict[Key, Value] = {}

    def __call__(self, argument: Key) -> Value:
        try:
            return self.known[argument]
        except KeyError:
            value = self.known[argument] = self.function(argument)
            return value
