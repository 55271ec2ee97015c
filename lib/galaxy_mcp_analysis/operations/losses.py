"""What a call would lose, read before it runs, so the person asked (mcp.consent) sees it by name.

Read from the call's arguments by their names (``items``, ``dataset_id``, ``workflow_id``, ``page_id``,
``job_id``, ``invocation_id``), each through the lookup layer (Galaxy's managers decide what the caller may
see); nothing is changed. An id the caller may not use is left out: the call itself then refuses it.
"""

from typing import Any

from galaxy_mcp_analysis.core.consent import Loss


class Losses:
    """Operations mixin of AnalysisOperationsManager: ``losses_of``, for the consent question."""

    def losses_of(self, arguments: dict[str, Any]) -> list[Loss]:
        readers = (("items", self._lost_items), ("dataset_id", self._lost_dataset),
                   ("workflow_id", self._lost_workflow), ("page_id", self._lost_page),
                   ("job_id", self._lost_job), ("invocation_id", self._lost_invocation))
        losses: list[Loss] = []
        for argument, read in readers:
            value = arguments.get(argument)
            if value:
                losses.extend(read(value))
        return losses

    def _quietly(self, read) -> list[Loss]:
        try:
            return [read()]
        except Exception:  # not the caller's, or no such item: the call's own checks say so
            return []

    def _lost_items(self, items: Any) -> list[Loss]:
        if not isinstance(items, list):
            return []
        found: list[Loss] = []
        for ref in items:
            if isinstance(ref, dict) and isinstance(ref.get("id"), str):
                found += self._quietly(lambda ref=ref: self._item_loss(ref.get("src", "hda"), ref["id"]))
        return found

    def _item_loss(self, src: str, item_id: str) -> Loss:
        item = self.lookup.item(src, item_id, own=True)
        if src == "hdca":
            count = item.collection.element_count if item.collection else None
            return Loss("collection", f"{item.hid}: {item.name}", f"{count} elements" if count is not None else "")
        return Loss("dataset", f"{item.hid}: {item.name}", item.extension or "", _size(item))

    def _lost_dataset(self, dataset_id: Any) -> list[Loss]:
        return self._quietly(lambda: self._item_loss("hda", str(dataset_id)))

    def _lost_workflow(self, workflow_id: Any) -> list[Loss]:
        def read() -> Loss:
            workflow = self.lookup.workflow(str(workflow_id), own=True)
            return Loss("workflow", workflow.name, f"{len(workflow.latest_workflow.steps)} steps")

        return self._quietly(read)

    def _lost_page(self, page_id: Any) -> list[Loss]:
        def read() -> Loss:
            page = self.lookup.page(str(page_id), own=True)
            return Loss("page", page.title, f"slug {page.slug}" if page.slug else "")

        return self._quietly(read)

    def _lost_job(self, job_id: Any) -> list[Loss]:
        def read() -> Loss:
            job = self.lookup.job(str(job_id))
            return Loss("job", f"{job_id} ({job.tool_id})", f"{job.state}; its outputs are discarded")

        return self._quietly(read)

    def _lost_invocation(self, invocation_id: Any) -> list[Loss]:
        def read() -> Loss:
            invocation = self.lookup.invocation(str(invocation_id))
            name = invocation.workflow.stored_workflow.name if invocation.workflow else str(invocation_id)
            return Loss("workflow invocation", name, f"{invocation.state}; its unfinished jobs are cancelled")

        return self._quietly(read)


def _size(hda) -> int | None:
    try:
        return int(hda.get_size())
    except Exception:  # a dataset still uploading has no file yet
        return None
