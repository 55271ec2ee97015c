"""core.result_ids: which of Galaxy's ids are dropped, by the kind of object that carries them."""

from galaxy_mcp_analysis.core.result_ids import (
    kind_of,
    without_internal_ids,
)


def test_a_history_dataset_loses_its_files_id_and_keeps_its_own():
    row = {"id": "a1", "history_content_type": "dataset", "dataset_id": "b2", "history_id": "h"}
    assert without_internal_ids(row) == {"id": "a1", "history_content_type": "dataset", "history_id": "h"}


def test_a_collection_loses_its_element_lists_id_and_a_map_overs_job_group():
    collection = {"id": "c1", "model_class": "HistoryDatasetCollectionAssociation", "collection_id": "c9",
                  "implicit_collection_jobs_id": "j9", "job_source_type": "ImplicitCollectionJobs",
                  "job_source_id": "j9", "elements": [
                      {"id": "e1", "model_class": "DatasetCollectionElement", "element_identifier": "a",
                       "object": {"id": "d1", "model_class": "HistoryDatasetAssociation", "dataset_id": "f1"}},
                      {"id": "e2", "model_class": "DatasetCollectionElement", "element_identifier": "b",
                       "object": {"id": "c7", "model_class": "DatasetCollection", "elements": []}}]}
    assert without_internal_ids(collection) == {
        "id": "c1", "model_class": "HistoryDatasetCollectionAssociation",
        "job_source_type": "ImplicitCollectionJobs", "elements": [
            {"model_class": "DatasetCollectionElement", "element_identifier": "a",
             "object": {"id": "d1", "model_class": "HistoryDatasetAssociation"}},
            {"model_class": "DatasetCollectionElement", "element_identifier": "b",
             "object": {"model_class": "DatasetCollection", "elements": []}}]}


def test_a_job_that_made_a_collection_is_kept_and_unmarked_objects_are_untouched():
    made_by_job = {"id": "c1", "history_content_type": "dataset_collection", "job_source_type": "Job",
                   "job_source_id": "j1"}
    assert without_internal_ids(made_by_job) == made_by_job
    ours = {"collection_id": "c1", "dataset_id": "d1", "id": "x"}  # our results name items, no marker
    assert without_internal_ids([ours]) == [ours] and kind_of(ours) is None
