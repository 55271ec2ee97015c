"""Jobs an agent runs, debugs and reruns.

One mixin per subject, joined here into ``Jobs``: ``failures`` (a job's logs and output verdict:
``get_job_errors``, the silent-failure flags ``get_job_status`` adds), ``waiting``
(``wait_for_jobs``), ``reruns`` (``get_job_parameters``, ``rerun_job``) with
``recorded_state`` (a job's recorded values read back through Galaxy's tool), ``tasks`` (the jobs
behind an MCP task: their states, their stop). Every job and
dataset is found through the lookup layer (Galaxy's managers decide); the rules live in
``core.job_logs``, ``core.waiting`` and ``core.reruns``. Listing and cancelling jobs is
``operations.managing``.
"""

from galaxy_mcp_analysis.operations.jobs.failures import JobFailures
from galaxy_mcp_analysis.operations.jobs.reruns import JobReruns
from galaxy_mcp_analysis.operations.jobs.tasks import TaskJobs
from galaxy_mcp_analysis.operations.jobs.waiting import JobWaiting


class Jobs(JobFailures, JobWaiting, JobReruns, TaskJobs):
    """Operations mixin of AnalysisOperationsManager (needs its ``app``, ``trans``, ``lookup``,
    ``jobs_service``, ``settings``, ``run_tool`` and ``preflight``)."""
