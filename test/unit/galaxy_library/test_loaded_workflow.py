"""invoke_workflow hands Galaxy's WorkflowsService the stored workflow the preflight already checked
(operations/workflows/loaded_workflow.py): only that workflow, only for that request's trans, only by stored
id; every other question goes to Galaxy's manager. And Galaxy's service still asks its manager the way the
copy answers (a Galaxy release that changed this would make invocations slower, not wrong: this says so)."""

import inspect

from galaxy.model import StoredWorkflow
from galaxy.webapps.galaxy.services.workflows import WorkflowsService

from galaxy_mcp_analysis.operations.workflows.loaded_workflow import service_with_loaded_workflow


class Manager:
    def __init__(self):
        self.asked = []

    def get_stored_accessible_workflow(self, trans, workflow_id, by_stored_id=True):
        self.asked.append((trans, workflow_id, by_stored_id))
        return f"looked up {workflow_id}"

    def get_all_tools(self, workflow):
        return ["tool"]


def galaxys_service(manager):
    service = WorkflowsService.__new__(WorkflowsService)
    service._workflows_manager = manager
    return service


def stored_workflow(stored_id):
    stored = StoredWorkflow()
    stored.id = stored_id
    return stored


def test_the_checked_workflow_is_answered_for_its_request_without_asking_again():
    manager, trans, stored = Manager(), object(), stored_workflow(7)
    service = galaxys_service(manager)
    view = service_with_loaded_workflow(service, trans, stored)
    assert view._workflows_manager.get_stored_accessible_workflow(trans, 7, True) is stored
    assert manager.asked == []
    assert service._workflows_manager is manager  # Galaxy's own service is untouched
    assert isinstance(view, WorkflowsService)


def test_any_other_question_goes_to_galaxys_manager():
    manager, trans, stored = Manager(), object(), stored_workflow(7)
    view = service_with_loaded_workflow(galaxys_service(manager), trans, stored)
    other_trans = object()
    assert view._workflows_manager.get_stored_accessible_workflow(other_trans, 7, True) == "looked up 7"
    assert view._workflows_manager.get_stored_accessible_workflow(trans, 8, True) == "looked up 8"
    assert view._workflows_manager.get_stored_accessible_workflow(trans, 7, False) == "looked up 7"
    assert manager.asked == [(other_trans, 7, True), (trans, 8, True), (trans, 7, False)]
    assert view._workflows_manager.get_all_tools(None) == ["tool"]


def test_galaxys_invocation_looks_the_workflow_up_through_its_manager():
    source = inspect.getsource(WorkflowsService.invoke_workflow)
    assert "self._workflows_manager.get_stored_accessible_workflow(trans, workflow_id, by_stored_id)" in source
    assert "self._workflows_manager = workflows_manager" in inspect.getsource(WorkflowsService.__init__)
