"""The patch that has Galaxy build its tool search index once the web process is elected config watcher.

Galaxy 26.1 queues one build of the index after start-up (the control task ``rebuild_toolbox_search_index``),
and that task builds only in a process its database heartbeat has already elected config watcher. The
election runs on the heartbeat's own thread, about 90 ms before the task on an idle machine (measured,
doc/testing.md); when it lands after the task, the task builds nothing and nothing queues another, so
``search_tools`` (and Galaxy's own ``/api/tools?q=``) finds no tool for the life of the process. When the
election lands and the index is still behind the toolbox, the patch queues Galaxy's same task again; the
task checks both again, so a copy that finds the index built does nothing.
"""

import inspect

from galaxy_mcp_analysis.activation.built_server import (
    add_server_customizer,
    check_mcp_tools,
)
from galaxy_mcp_analysis.core.settings import Settings

TASK = "rebuild_toolbox_search_index"


def check_search_index() -> str | None:
    from galaxy import queue_worker
    from galaxy.model.database_heartbeat import DatabaseHeartbeat
    from galaxy.tools import ToolBox
    from galaxy.tools.search import ToolBoxSearch

    if not callable(getattr(DatabaseHeartbeat, "add_change_callback", None)):
        return "DatabaseHeartbeat.add_change_callback is gone (the config watcher's election callbacks)"
    if not isinstance(getattr(DatabaseHeartbeat, "is_config_watcher", None), property):
        return "DatabaseHeartbeat.is_config_watcher is no longer a property"
    task = getattr(queue_worker, "control_message_to_task", {}).get(TASK)
    if task is None or not callable(getattr(queue_worker, "send_local_control_task", None)):
        return f"galaxy.queue_worker no longer has the control task {TASK} or send_local_control_task"
    # What the task decides by, and what the patch reads to decide whether to queue it again.
    if not {"is_config_watcher", "index_count", "_reload_count"} <= set(task.__code__.co_names):
        return f"{TASK} no longer builds by the config watcher's election and the index's count"
    if "self.index_count" not in inspect.getsource(ToolBoxSearch.__init__):
        return "ToolBoxSearch no longer counts its builds (index_count)"
    if "self._reload_count" not in inspect.getsource(ToolBox.__init__):
        return "galaxy.tools.ToolBox no longer counts its reloads (_reload_count)"
    return check_mcp_tools()


def index_behind(gx_app) -> bool:
    """Whether the toolbox was loaded more often than the search index was built (Galaxy's own test)."""
    return gx_app.toolbox_search.index_count < gx_app.toolbox._reload_count


def apply_search_index(settings: Settings) -> None:
    from galaxy.queue_worker import send_local_control_task

    def rebuild_when_elected(mcp, gx_app):
        heartbeat = getattr(gx_app, "database_heartbeat", None)
        if heartbeat is None:  # not a web process: it builds no index
            return

        def on_election(is_config_watcher: bool) -> None:
            if is_config_watcher and index_behind(gx_app):
                send_local_control_task(gx_app, TASK)

        heartbeat.add_change_callback(on_election)
        # Galaxy's launcher builds the MCP app after the heartbeat has started: the election may be in already.
        on_election(heartbeat.is_config_watcher)

    add_server_customizer(rebuild_when_elected)
