"""gunicorn worker class: Galaxy's worker with the patch set applied (production switch).

gravity runs ``gunicorn 'galaxy.webapps.galaxy.fast_factory:factory()' -k
galaxy.webapps.galaxy.workers.Worker ... <extra_args>`` and a later ``-k`` wins, so
one line in galaxy.yml switches the patch set on::

    gravity:
      gunicorn:
        extra_args: --worker-class galaxy_mcp_analysis.worker.Worker

The arbiter imports the worker class before it preloads the app (``--preload``)
and before it forks workers, so activating at import covers both.
"""

from galaxy.webapps.galaxy.workers import Worker as GalaxyWorker

from galaxy_mcp_analysis.activation import activate

activate()


class Worker(GalaxyWorker):
    """Galaxy's gunicorn worker; importing this module is what applies the patches."""
