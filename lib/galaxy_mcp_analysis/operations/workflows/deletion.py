"""Deleting and restoring a stored workflow: Galaxy's ``WorkflowsService.delete`` and ``undelete``
(its ``deleted`` flag), for the workflow's owner only (``self.lookup.workflow(own=True)``)."""

from typing import Any


class WorkflowDeletion:
    """Deleting and restoring the caller's workflow, a mixin of ``Workflows``."""

    def delete_workflow(self, workflow_id: str) -> dict[str, Any]:
        return self._set_workflow_deleted(workflow_id, deleted=True)

    def restore_workflow(self, workflow_id: str) -> dict[str, Any]:
        return self._set_workflow_deleted(workflow_id, deleted=False)

    def _set_workflow_deleted(self, workflow_id: str, deleted: bool) -> dict[str, Any]:
        stored = self.lookup.workflow(workflow_id, own=True)
        service = self.workflows_service
        (service.delete if deleted else service.undelete)(self.trans, stored.id)
        self.trans.sa_session.refresh(stored)
        return {"workflow_id": workflow_id, "name": stored.name, "deleted": stored.deleted,
                "published": stored.published}
