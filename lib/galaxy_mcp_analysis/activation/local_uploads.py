"""The patch that mounts the upload URLs' route (``create_upload_url``) on Galaxy's app.

Once Galaxy has added the MCP app (``include_mcp``), the one-use table is created in Galaxy's database if
missing (uploads.uses) and ``/api/mcp-upload/{token}`` goes in front of Galaxy's routes (uploads.route);
no MCP app (``enable_mcp_server: false``): nothing is mounted, as the tool is not served either.
"""

import inspect

from galaxy_mcp_analysis.core.settings import Settings

_MARK = "__galaxy_mcp_analysis_uploads__"


def check_upload_route() -> str | None:
    from galaxy.schema.fetch_data import (
        BaseDataPayload,
        FileDataElement,
    )
    from galaxy.tools.parameters.basic import FileToolParameter
    from galaxy.webapps.galaxy.services.tools import ToolsService

    from galaxy_mcp_analysis.activation.transport import check_mcp_routes_first

    # The hand-over of a staged file is Galaxy's resumable upload's: files_<n>|file_data {session_id}
    # (an extra field of the fetch payload), read by FileToolParameter from the upload store.
    if BaseDataPayload.model_config.get("extra") != "allow":
        return "galaxy.schema.fetch_data.BaseDataPayload no longer allows the files_<n>|file_data fields"
    if "src" not in FileDataElement.model_fields:
        return "galaxy.schema.fetch_data.FileDataElement is gone"
    source = inspect.getsource(FileToolParameter.from_json)
    if "session_id" not in source or "tus_upload_store" not in source:
        return "FileToolParameter.from_json no longer reads a session_id from tus_upload_store or new_file_path"
    if not callable(getattr(ToolsService, "create_fetch", None)):
        return "ToolsService.create_fetch is gone"
    return check_mcp_routes_first()


def apply_upload_route(settings: Settings) -> None:
    from galaxy_mcp_analysis.activation.transport import after_include_mcp

    def mount(app, gx_app, mcp_app):
        if mcp_app is not None:
            install_upload_route(app, gx_app, settings)

    after_include_mcp(mount, mark=_MARK)


def install_upload_route(app, gx_app, settings: Settings) -> None:
    from galaxy_mcp_analysis.mcp.audit import audit_sink
    from galaxy_mcp_analysis.uploads.route import UploadRoute
    from galaxy_mcp_analysis.uploads.uses import UploadUses

    from galaxy_mcp_analysis import tools
    from galaxy_mcp_analysis.mcp.policy_file import (
        policy_path,
        PolicySource,
    )

    uses = UploadUses(gx_app.model.engine)
    uses.create_table()
    policy = PolicySource(policy_path(settings, gx_app), tools.TOOL_FACTS)  # the same file the MCP calls obey
    app.router.routes[:0] = UploadRoute(gx_app, uses, audit_sink(settings, gx_app), policy).routes()
