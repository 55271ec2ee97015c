"""``make serve-production``: Galaxy as admins run it, for an admin to try locally.

gravity (``galaxyctl``, ``testing.gravity``) with gunicorn workers, job handlers and Celery on a
throw-away Redis (``testing.redis_server``) and PostgreSQL (``testing.postgres``, unless
DATABASE_URL names a database), each start in an emptied DATA_DIR; stopped by Ctrl-C, every
process by its PID.

    python -m galaxy_mcp_analysis.testing.production --data-dir .galaxy-production --port 8080
"""

import argparse
import os
import shutil
import signal
import sys
import threading
from pathlib import Path

from galaxy_mcp_analysis.serve import galaxy_config
from galaxy_mcp_analysis.testing.gravity import GravityGalaxy
from galaxy_mcp_analysis.testing.redis_server import RedisServer

# ---- make serve-production ----

MARKER = ".galaxy-mcp-analysis-production"


def _prepare(data_dir: Path) -> Path:
    """A fresh DATA_DIR: each start begins empty (the database is throw-away too)."""
    data_dir = data_dir.resolve()
    if data_dir.exists() and any(data_dir.iterdir()):
        if not (data_dir / MARKER).exists():
            raise SystemExit(f"error: DATA_DIR {data_dir} is not empty and was not made by serve-production; "
                             "choose another DATA_DIR.")
        shutil.rmtree(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / MARKER).write_text("made by make serve-production; emptied at its next start\n")
    return data_dir


def main(argv=None) -> int:
    from galaxy_mcp_analysis.serve import launcher
    from galaxy_mcp_analysis.testing.postgres import PostgresCluster

    parser = argparse.ArgumentParser(prog="make serve-production", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ.get("DATA_DIR") or ".galaxy-production"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT") or 8080))
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL") or None,
                        help="an empty PostgreSQL database (default: a throw-away cluster on loopback)")
    launcher.add_job_runner_argument(parser)
    args = parser.parse_args(argv)
    launcher.check_port_free(args.port)
    data_dir = _prepare(args.data_dir)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    cluster = redis = galaxy = engine = None
    try:
        engine = launcher.start_job_engine(args.job_runner, data_dir)
        if args.database_url:
            database_url = args.database_url
        else:
            cluster = PostgresCluster().start()
            database_url = cluster.create_database("galaxy")
        redis = RedisServer().start()
        stored = launcher.load_secrets(data_dir)
        galaxy = GravityGalaxy(data_dir / "galaxy", database_url=database_url, broker_url=redis.url, port=args.port,
                               admin_api_key=stored["admin_api_key"], id_secret=stored["id_secret"],
                               job_config=engine.job_config, env=engine.environ)
        print(f"starting gravity (galaxyctl start) with {galaxy.data_dir / 'galaxy.yml'} ...", flush=True)
        galaxy.start()
        api_key = launcher.ensure_logins(galaxy.galaxy_url, data_dir, stored)
        launcher.announce(data_dir, galaxy.galaxy_url, api_key, stored, galaxy_config.MCP_PATH, engine.describe(),
                          galaxy_files=galaxy.data_dir)
        programs = ", ".join(f"{name} (pid {info['pid']})" for name, info in galaxy.programs().items())
        print(f"gravity programs: {programs}\nlogs: {galaxy.log_dir}\ngalaxyctl: "
              f"GALAXY_CONFIG_FILE={galaxy.config_file} {sys.prefix}/bin/galaxyctl status", flush=True)
        stop.wait()
    except launcher.LaunchError as e:  # the job engine is not installed: one line, as make serve says it
        print(f"error: {e}", file=sys.stderr)
        return 2
    finally:
        if galaxy is not None:
            print("stopping (galaxyctl stop) ...", flush=True)
            leftovers = galaxy.stop()
            if leftovers:
                print(f"killed {len(leftovers)} process(es) left after galaxyctl stop", file=sys.stderr)
        if engine is not None:
            engine.stop()
        if redis is not None:
            redis.stop()
        if cluster is not None:
            cluster.stop()
        (data_dir / "server.json").unlink(missing_ok=True)
        print("stopped: galaxyctl stop, then the job engine, Redis" + (" and PostgreSQL" if cluster is not None else "")
              + " by PID", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
