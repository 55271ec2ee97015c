"""Galaxy's ``WorkflowsService`` for one invocation whose workflow the preflight has already looked up.

The preflight finds the caller's stored workflow through Galaxy's
``WorkflowsManager.get_stored_accessible_workflow`` (``operations/lookup.py``); Galaxy's
``WorkflowsService.invoke_workflow`` then asks its own ``_workflows_manager`` the same question about
the same id for the same request (one query loading the workflow with every step: about 5 ms a call).
For this call only, the service is a copy whose manager answers that one question, asked by this
request's ``trans`` for this stored workflow's id, with the object already checked, and hands every
other call to Galaxy's manager. Galaxy's service runs as it is; nothing is shared between calls.
"""

import copy
from typing import Any

from galaxy.model import StoredWorkflow


class _ManagerWithLoadedWorkflow:
    """Galaxy's ``WorkflowsManager``, except that one stored workflow, already found accessible by
    ``get_stored_accessible_workflow`` for this ``trans``, is answered without asking the database again."""

    def __init__(self, manager: Any, trans: Any, stored: StoredWorkflow):
        self._manager = manager
        self._trans = trans
        self._stored = stored

    def get_stored_accessible_workflow(self, trans, workflow_id, by_stored_id=True):
        if trans is self._trans and by_stored_id and workflow_id == self._stored.id:
            return self._stored
        return self._manager.get_stored_accessible_workflow(trans, workflow_id, by_stored_id)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._manager, name)


def service_with_loaded_workflow(service: Any, trans: Any, stored: StoredWorkflow) -> Any:
    """A per-call copy of Galaxy's ``WorkflowsService`` whose workflow lookup answers ``stored`` for ``trans``."""
    view = copy.copy(service)
    view._workflows_manager = _ManagerWithLoadedWorkflow(service._workflows_manager, trans, stored)
    return view
