"""Jobs read with what every row of a listing or a wait touches, as columns (``core.job_records``): their outputs
(association name, dataset id, the dataset's state, size, visibility and hid) and output collections, one query
for any number of jobs (two from bare ids); and, only for the jobs whose silent-failure verdict needs it, their
evidence (stderr, messages, their data inputs' sizes), two more. Reading the same as objects (every job, association,
dataset and file record with all its columns) cost 40 % of a 500-row list_jobs (make bench --only runners).
"""

from collections import namedtuple
from collections.abc import (
    Iterable,
    Sequence,
)
from typing import Any

from galaxy.model import (
    Dataset,
    HistoryDatasetAssociation,
    Job,
    JobToInputDatasetAssociation,
    JobToOutputDatasetAssociation,
    JobToOutputDatasetCollectionAssociation,
)
from sqlalchemy import (
    bindparam,
    literal,
    null,
    select,
    union_all,
)
from sqlalchemy.orm import (
    joinedload,
    selectinload,
)

from galaxy_mcp_analysis.core.job_logs import (
    evidence_of,
    JobEvidence,
)
from galaxy_mcp_analysis.core.job_records import (
    dataset_size,
    instance_state,
    JobRecord,
    OutputRecord,
)

#: The job's own columns a row reads (a Job object from Galaxy's index has them too).
JOB_COLUMNS = (
    Job.id, Job.state, Job.tool_id, Job.tool_version, Job.exit_code, Job.create_time, Job.update_time,
    Job.history_id, Job.dynamic_tool_id,
)

#: The JOB_COLUMNS of the jobs bound to ``job_ids`` (the statements here are built once: see OUTPUTS_AND_COLLECTIONS).
JOB_HEADS = select(*JOB_COLUMNS).where(Job.id.in_(bindparam("job_ids", expanding=True)))

#: A job's JOB_COLUMNS as values read once (an object's attributes expire when a wait gives its transaction back).
JobColumns = namedtuple("JobColumns", [column.key for column in JOB_COLUMNS])


def job_columns(job: Job) -> JobColumns:
    """The JOB_COLUMNS of a job already loaded as an object (a head for job_records)."""
    return JobColumns(*(getattr(job, column.key) for column in JOB_COLUMNS))


def indexed_jobs(trans, job_manager, payload) -> list[Job]:
    """The jobs of Galaxy's own job index (``JobManager.index_query``) for ``payload``, without the REST
    serialization of every row that ``JobsService.index`` adds. The caller has checked what index_query leaves to
    it: a history named in the payload was looked up for the caller (``lookup.history``), and a user named in it
    is the caller."""
    return list(job_manager.index_query(trans, payload))


def job_records(session, jobs: Iterable[Any]) -> dict[int, JobRecord]:
    """Job id -> its record, outputs read with it. ``jobs``: decoded ids, or objects with the job's columns
    (Galaxy's Job, as indexed_jobs returns them)."""
    heads = list(jobs)
    if heads and isinstance(heads[0], int):
        heads = list(session.execute(JOB_HEADS, {"job_ids": heads}))
    if not heads:
        return {}
    ids = [head.id for head in heads]
    outputs, collections = _outputs_and_collections_of(session, ids)
    return {head.id: _record(head, outputs.get(head.id, ()), collections.get(head.id, ())) for head in heads}


def _record(head, outputs: Iterable[OutputRecord], collections: Iterable[tuple[str, int]]) -> JobRecord:
    """``head``: the job's columns (a Job, or a row of JOB_COLUMNS)."""
    columns = {column.key: getattr(head, column.key) for column in JOB_COLUMNS}
    return JobRecord(**columns, outputs=tuple(outputs), collections=tuple(collections))


def _outputs_and_collections_statement():
    """Every output dataset (with its dataset's state, size, visibility and hid) and output collection of the jobs
    bound to ``job_ids``, as one UNION ALL of the two association tables in association order."""
    association, hda = JobToOutputDatasetAssociation, HistoryDatasetAssociation
    collection = JobToOutputDatasetCollectionAssociation
    datasets = (
        select(
            literal(0).label("kind"), association.id.label("position"), association.job_id, association.name,
            association.dataset_id.label("item_id"), hda._state.label("own_state"), hda.visible,
            hda.purged.label("item_purged"), hda.history_id, hda.hid, Dataset.state.label("file_state"),
            Dataset.purged.label("file_purged"), Dataset.file_size,
        )
        .select_from(association)
        .outerjoin(hda, hda.id == association.dataset_id)
        .outerjoin(Dataset, Dataset.id == hda.dataset_id)
        .where(association.job_id.in_(bindparam("job_ids", expanding=True)))
    )
    collections = select(
        literal(1), collection.id, collection.job_id, collection.name, collection.dataset_collection_id,
        *(null() for _ in range(8)),
    ).where(collection.job_id.in_(bindparam("job_ids", expanding=True)))
    both = union_all(datasets, collections).subquery()
    return select(both).order_by(both.c.kind, both.c.position)


#: Built once: building this statement and its cache key cost about 1.4 ms of every list_jobs or wait_for_jobs
#: call (SQLAlchemy's Python, measured on a 10-job listing), six times what executing it costs.
OUTPUTS_AND_COLLECTIONS = _outputs_and_collections_statement()


def _outputs_and_collections_of(session, ids: Sequence[int]) -> tuple[dict, dict]:
    """Job id -> its OutputRecords, and job id -> its (name, collection id) pairs, each in association order: one
    query (a statement costs more than its rows at a listing's sizes)."""
    outputs: dict[int, list[OutputRecord]] = {}
    named: dict[int, list[tuple[str, int]]] = {}
    for row in session.execute(OUTPUTS_AND_COLLECTIONS, {"job_ids": list(ids)}):
        if row.kind:
            named.setdefault(row.job_id, []).append((row.name, row.item_id))
            continue
        outputs.setdefault(row.job_id, []).append(OutputRecord(
            name=row.name,
            dataset_id=row.item_id,
            state=instance_state(row.own_state, row.file_state),
            size=dataset_size(row.item_purged, row.file_purged, row.file_size),
            visible=bool(row.visible),
            history_id=row.history_id,
            hid=row.hid,
        ))
    return outputs, named


#: The sizes of the data inputs of the jobs bound to ``job_ids``, and those jobs' stderr, exit code and messages.
INPUT_SIZES = (
    select(JobToInputDatasetAssociation.job_id, HistoryDatasetAssociation.purged.label("item_purged"),
           Dataset.purged.label("file_purged"), Dataset.file_size)
    .select_from(JobToInputDatasetAssociation)
    .join(HistoryDatasetAssociation, HistoryDatasetAssociation.id == JobToInputDatasetAssociation.dataset_id)
    .join(Dataset, Dataset.id == HistoryDatasetAssociation.dataset_id)
    .where(JobToInputDatasetAssociation.job_id.in_(bindparam("job_ids", expanding=True)))
    .order_by(JobToInputDatasetAssociation.id)
)
JOB_LOGS = select(Job.id, Job.exit_code, Job.tool_stderr, Job.job_messages).where(
    Job.id.in_(bindparam("job_ids", expanding=True)))


def evidences_of(session, ids: Sequence[int]) -> dict[int, JobEvidence]:
    """Job id -> what the silent-failure rule weighs besides the outputs (core.job_logs.evidence_of), two queries."""
    if not ids:
        return {}
    bound = {"job_ids": list(ids)}
    sizes: dict[int, list[int | None]] = {}
    for row in session.execute(INPUT_SIZES, bound):
        sizes.setdefault(row.job_id, []).append(dataset_size(row.item_purged, row.file_purged, row.file_size))
    return {row.id: evidence_of(row.exit_code, row.tool_stderr, row.job_messages, sizes.get(row.id, ()))
            for row in session.execute(JOB_LOGS, bound)}


def job_record(job: Job) -> JobRecord:
    """One already loaded job as its record (for a single job: get_job_errors, a remedy, get_job_parameters)."""
    outputs = []
    for association in job.output_datasets:
        hda = association.dataset
        outputs.append(OutputRecord(name=association.name, dataset_id=association.dataset_id) if hda is None else
                       OutputRecord(
                           name=association.name,
                           dataset_id=hda.id,
                           state=hda.state,
                           size=dataset_size(hda.purged, hda.dataset.purged, hda.dataset.file_size),
                           visible=bool(hda.visible),
                           history_id=hda.history_id,
                           hid=hda.hid,
                       ))
    collections = [(output.name, output.dataset_collection_id) for output in job.output_dataset_collection_instances]
    return _record(job, outputs, collections)


def job_evidence(job: Job) -> JobEvidence:
    """One already loaded job's evidence (core.job_logs.evidence_of)."""
    return evidence_of(
        job.exit_code, job.tool_stderr, job.job_messages,
        (dataset_size(a.dataset.purged, a.dataset.dataset.purged, a.dataset.dataset.file_size)
         for a in job.input_datasets if a.dataset),
    )


def jobs_with_outputs(session, job_ids: Iterable[int]) -> dict[int, Job]:
    """Decoded id -> Job as an object, outputs and inputs loaded (list_jobs with include_parameters reads each
    job's recorded parameters through Galaxy's tool). Keep the dict while the rows are built: the session maps
    loaded objects weakly, so ``session.get(Job, id)`` then answers from memory."""
    ids = list(job_ids)
    if not ids:
        return {}
    statement = select(Job).where(Job.id.in_(ids)).options(
        selectinload(Job.output_datasets)
        .joinedload(JobToOutputDatasetAssociation.dataset)
        .joinedload(HistoryDatasetAssociation.dataset),
        selectinload(Job.output_dataset_collection_instances),
        selectinload(Job.input_datasets)
        .joinedload(JobToInputDatasetAssociation.dataset)
        .joinedload(HistoryDatasetAssociation.dataset),
    )
    return {job.id: job for job in session.scalars(statement)}
