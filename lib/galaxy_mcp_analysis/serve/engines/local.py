"""Galaxy's local job runner: jobs run as children of the Galaxy process that handles them (the default)."""

from pathlib import Path

from galaxy_mcp_analysis.serve.engines.base import RunningEngine

LOCAL_WORKERS = 4


def local_job_config() -> dict:
    return {
        "runners": {"local": {"load": "galaxy.jobs.runners.local:LocalJobRunner", "workers": LOCAL_WORKERS}},
        "execution": {"default": "local", "environments": {"local": {"runner": "local"}}},
    }


class LocalEngine:
    name = "local"

    @classmethod
    def available(cls) -> str | None:
        return None

    def __init__(self, root: Path):
        self.root = Path(root)

    def start(self) -> RunningEngine:
        return RunningEngine(name=self.name, job_config=local_job_config())
