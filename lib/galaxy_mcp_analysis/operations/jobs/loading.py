"""Jobs read together with what every row of a listing or a wait touches (their output associations, those
datasets and their files' records; their data inputs, which an ok job's silent-failure evidence sizes): four
queries for any number of jobs, where reading each job's
relationships as a row asks for them cost three or more per job (make bench --only runners: list_jobs of
a 10-job map-over 4 times Galaxy's own job listing)."""

from collections.abc import Iterable

from galaxy.model import (
    HistoryDatasetAssociation,
    Job,
    JobToInputDatasetAssociation,
    JobToOutputDatasetAssociation,
)
from sqlalchemy import select
from sqlalchemy.orm import (
    joinedload,
    selectinload,
)


def jobs_with_outputs(session, job_ids: Iterable[int]) -> dict[int, Job]:
    """Decoded id -> Job, outputs loaded. Keep the dict while the rows are built: the session maps loaded
    objects weakly, so ``session.get(Job, id)`` then answers from memory."""
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
