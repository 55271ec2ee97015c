"""The job surveys' statements built once (operations.jobs.loading, .reruns, .waiting), on Galaxy's own schema in an
in-memory sqlite: each takes any number of bound ids, returns what its reader expects, and the replacement query
reads through the history's index (with ``deleted`` in its WHERE clause sqlite read every dataset not deleted)."""

import pytest
from galaxy.model import (
    Dataset,
    History,
    HistoryDatasetAssociation,
    HistoryDatasetCollectionAssociation,
    Job,
    mapper_registry,
    User,
)
from sqlalchemy import create_engine
from sqlalchemy.orm import Session

from galaxy_mcp_analysis.operations.jobs.loading import (
    _outputs_and_collections_of,
    evidences_of,
    job_records,
)
from galaxy_mcp_analysis.operations.jobs.reruns import DATASETS_AT_HIDS


@pytest.fixture(scope="module")
def engine():
    engine = create_engine("sqlite://")
    mapper_registry.metadata.create_all(engine)
    return engine


def plan(engine, statement, **bound) -> str:
    sql = statement.params(**bound).compile(engine, compile_kwargs={"render_postcompile": True, "literal_binds": True})
    with engine.connect() as connection:
        return " | ".join(row[-1] for row in connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}"))


def test_the_replacement_query_reads_only_the_listed_histories(engine):
    shown = plan(engine, DATASETS_AT_HIDS, histories=[1, 2], hids=[1, 2, 3])
    assert "ix_history_dataset_association_history_id" in shown, shown
    assert "deleted" not in shown, shown


def test_a_jobs_outputs_and_collections_come_back_in_association_order(engine):
    with Session(engine) as session:
        user = User(email="a@b.c", password="x")
        history = History(user=user, name="h")
        job = Job()
        job.history, job.user, job.tool_id, job.state = history, user, "Cut1", "ok"
        outputs = []
        for n in range(3):
            hda = HistoryDatasetAssociation(history=history, hid=n + 1, create_dataset=True, sa_session=session)
            hda.dataset.state, hda.dataset.file_size, hda.visible = Dataset.states.OK, 10 * n, n != 1
            job.add_output_dataset(f"out{n}", hda)
            outputs.append(hda)
        collection = HistoryDatasetCollectionAssociation(history=history, hid=4)
        job.add_output_dataset_collection("list_out", collection)
        session.add_all([user, history, job, *outputs, collection])
        session.flush()
        other = Job()
        other.history, other.user, other.tool_id, other.state = history, user, "Cut1", "error"
        session.add(other)
        session.flush()

        records = job_records(session, [job.id, other.id])
        assert [(o.name, o.dataset_id, o.size, o.visible, o.hid) for o in records[job.id].outputs] == [
            (f"out{n}", outputs[n].id, 10 * n, n != 1, n + 1) for n in range(3)]
        assert records[job.id].collections == (("list_out", collection.id),)
        assert records[other.id].outputs == () and records[other.id].collections == ()
        assert _outputs_and_collections_of(session, [other.id]) == ({}, {})
        assert set(evidences_of(session, [job.id, other.id])) == {job.id, other.id}
