"""The Galaxy configuration ``make serve`` and the tests run: written into DATA_DIR.

Jobs on the engine the launcher started (serve/engines: Galaxy's local runner by default), in-process Celery on an in-memory broker (uploads and
metadata in about a second instead of a Galaxy-importing subprocess each), and
Galaxy's own default toolbox, less the tools that cannot run here (serve/toolbox.py).

``write_production`` writes the production shape instead (``make serve-production`` and
test_production_deployment.py): a ``gravity:`` section (gunicorn with the patch set's
worker class, job handler processes, a Celery worker and beat) and Celery on a broker.
"""

from pathlib import Path

import yaml

from galaxy_mcp_analysis.serve import tool_data
from galaxy_mcp_analysis.serve.engines.local import local_job_config
from galaxy_mcp_analysis.serve.toolbox import (
    default_toolbox,
    LEFT_OUT_FILE,
)

MCP_PATH = "/api/mcp"
ADMIN_EMAIL = "admin@example.org"


def toolbox_xml() -> str:
    """Galaxy's own default toolbox, less what cannot run here (serve/toolbox.py)."""
    return default_toolbox().xml


#: The file name of an admin's own data tables, looked for beside each tool configuration served.
DATA_TABLES_FILE = "tool_data_table_conf.xml"


def data_tables_beside(tool_confs: list[str] | None) -> list[str]:
    """The ``tool_data_table_conf.xml`` files beside the tool configurations (TOOL_CONF) that have one:
    their tools' ``from_data_table`` options then list the tables' entries, as on the admin's server."""
    found = (Path(conf).parent / DATA_TABLES_FILE for conf in tool_confs or [])
    return list(dict.fromkeys(str(path) for path in found if path.is_file()))


def galaxy_settings(
    data_dir: Path,
    *,
    galaxy_url: str,
    id_secret: str,
    admin_api_key: str,
    database_url: str | None,
    tool_confs: list[str] | None = None,
    job_config: dict | None = None,
) -> dict:
    """``job_config``: Galaxy's inline job configuration from the started engine (serve/engines); the local
    runner's when None."""
    # sqlite: writers take the lock when their transaction begins (IMMEDIATE) and queue for
    # it up to `timeout` seconds. The driver's default of 5 s was measured too short: 16
    # concurrent MCP clients on 2 busy cores got "database is locked" (test_concurrency.py).
    database = database_url or f"sqlite:///{data_dir / 'universe.sqlite'}?isolation_level=IMMEDIATE&timeout=60"
    return {
        "database_connection": database,
        "database_auto_migrate": True,
        "data_dir": str(data_dir),
        "file_path": str(data_dir / "objects"),
        "new_file_path": str(data_dir / "tmp"),
        "job_working_directory": str(data_dir / "jobs"),
        "tool_dependency_dir": str(data_dir / "dependencies"),
        # Galaxy's default toolbox, then an admin's own tool configurations (make serve TOOL_CONF=...).
        "tool_config_file": [str(data_dir / "tool_conf.xml"), *(tool_confs or [])],
        # An empty table file (Galaxy's sample tables would trigger downloads), then the data tables an
        # admin's tool configuration brings: a tool_data_table_conf.xml beside its tool_conf.xml.
        # (comma-separated: the option is a string that Galaxy splits into a list)
        "tool_data_table_config_path": ",".join([str(data_dir / DATA_TABLES_FILE), *data_tables_beside(tool_confs)]),
        # builds.txt, twobit.loc and the display applications' build sites, all empty (serve/tool_data.py).
        **tool_data.settings(data_dir),
        "admin_users": ADMIN_EMAIL,
        "bootstrap_admin_api_key": admin_api_key,
        "id_secret": id_secret,
        "galaxy_infrastructure_url": galaxy_url,
        "enable_mcp_server": True,
        "mcp_server_path": MCP_PATH,
        "conda_auto_init": False,
        "conda_auto_install": False,
        "involucro_auto_init": False,
        "watch_tools": "false",
        "allow_user_creation": True,
        # An admin may delete an account (test_upload_url: an upload URL of a deleted account is refused).
        "allow_user_deletion": True,
        "log_level": "INFO",
        # URL uploads from a test HTTP server on loopback are refused otherwise.
        "fetch_url_allowlist": ["127.0.0.0/24"],
        # With sign-in on: a client's metadata document may be served on this machine (core/client_documents.py).
        "mcp_analysis_oauth_development": True,
        "enable_celery_tasks": True,
        "metadata_strategy": "directory_celery",
        "celery_conf": {"broker_url": "memory://", "result_backend": "rpc://localhost"},
        "job_config": dict(job_config or local_job_config()),
    }


def write(data_dir: Path, **settings) -> Path:
    """Write galaxy.yml and its companion files; returns the galaxy.yml path."""
    return _write(data_dir, {"galaxy": galaxy_settings(data_dir, **settings)})


def _write(data_dir: Path, config: dict) -> Path:
    for sub in ("objects", "tmp", "jobs", "dependencies"):
        (data_dir / sub).mkdir(exist_ok=True)
    toolbox = default_toolbox()
    (data_dir / "tool_conf.xml").write_text(toolbox.xml)
    (data_dir / LEFT_OUT_FILE).write_text("".join(f"{left.line()}\n" for left in toolbox.left_out))
    # No sample tables (they would trigger downloads): only the display applications' tables, empty.
    (data_dir / DATA_TABLES_FILE).write_text(f"<tables>\n{tool_data.write(data_dir)}</tables>\n")
    config_file = data_dir / "galaxy.yml"
    config_file.write_text(yaml.safe_dump(config, sort_keys=False))
    return config_file


# ---- The production shape: gravity, separate job handlers, Celery on a broker, PostgreSQL ----

#: The patch set's one line in a gravity-managed galaxy.yml (README, doc/admin-guide.md).
WORKER_CLASS_ARGS = "--worker-class galaxy_mcp_analysis.worker.Worker"
#: Gravity's name for the dynamic job handlers below; processes are <name>_0, <name>_1, ...
HANDLER_SERVICE = "handler"


def gravity_section(*, port: int, virtualenv: str, web_workers: int = 2, handlers: int = 2) -> dict:
    """The ``gravity:`` section: gunicorn with the patch set's worker class, job handlers, Celery and beat.

    The gunicorn ``extra_args`` line is the only line the patch set needs; handlers and
    Celery run Galaxy's own code, untouched (doc/admin-guide.md, "Running at scale").
    """
    return {
        "process_manager": "supervisor",
        "virtualenv": virtualenv,
        "gunicorn": {
            "bind": f"127.0.0.1:{port}",
            "workers": web_workers,
            "preload": True,
            "extra_args": WORKER_CLASS_ARGS,
        },
        "celery": {"concurrency": 2, "loglevel": "INFO", "enable_beat": True},
        "handlers": {HANDLER_SERVICE: {"processes": handlers, "pools": ["job-handlers", "workflow-schedulers"]}},
    }


def production_settings(data_dir: Path, *, broker_url: str, database_url: str, **settings) -> dict:
    """The ``galaxy:`` section of the production shape: make serve's settings, with Celery on
    ``broker_url`` (a separate worker process consumes it) and jobs handed to the handler
    processes by the database (``db-skip-locked``), never run in a web worker."""
    galaxy = galaxy_settings(data_dir, database_url=database_url, **settings)
    galaxy["celery_conf"] = {"broker_url": broker_url, "result_backend": broker_url}
    galaxy["job_config"]["handling"] = {"assign": ["db-skip-locked"]}
    galaxy["mcp_analysis_oauth_development"] = False  # as a site runs: client metadata from public https only
    return galaxy


def write_production(
    data_dir: Path, *, port: int, virtualenv: str, web_workers: int = 2, handlers: int = 2, **settings
) -> Path:
    """Write a gravity-managed galaxy.yml (``gravity:`` and ``galaxy:`` sections) and its companion files."""
    config = {
        "gravity": gravity_section(port=port, virtualenv=virtualenv, web_workers=web_workers, handlers=handlers),
        "galaxy": production_settings(data_dir, **settings),
    }
    return _write(data_dir, config)
