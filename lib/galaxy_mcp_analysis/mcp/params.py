"""Parameter types shared by tool declarations, so an id is described the same way everywhere."""

from typing import Annotated

from pydantic import Field

DatasetId = Annotated[str, Field(description="Encoded id of a history dataset (hda), e.g. from get_history_contents.")]
HistoryId = Annotated[str, Field(description="Encoded id of a history, e.g. from list_histories or create_history.")]
JobId = Annotated[str, Field(description="Encoded id of a job, e.g. from run_tool's `jobs`.")]
CollectionId = Annotated[
    str, Field(description="Encoded id of a history collection (hdca), e.g. from create_collection.")
]
