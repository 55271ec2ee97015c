"""Several job engines behind one Galaxy (``JOB_RUNNER=local,slurm,pulsar``): each engine's runners and
environments side by side, and as the default a dynamic environment that sends a user's jobs to the
engine one of their roles names (a role called ``slurm`` -> Slurm), other users' jobs to the first
engine listed. Sites route the same way by group or by tool; this is the smallest rule that lets one
Galaxy, and one test run, reach every engine."""

from galaxy_mcp_analysis.serve.engines.base import RunningEngine

#: The default environment's id when several engines are started.
ROUTING_ENVIRONMENT = "by_role"
RULES_MODULE = "galaxy_mcp_analysis.serve.job_routes"


def combined(engines: list[RunningEngine]) -> RunningEngine:
    """One RunningEngine for ``engines`` (started, in the switch's order; the first is the default)."""
    runners: dict = {}
    environments: dict = {}
    tools: list = []
    for engine in engines:
        config = engine.job_config
        _merge(runners, config.get("runners", {}), "runner")
        _merge(environments, config["execution"]["environments"], "environment")
        tools += [tool for tool in config.get("tools", []) if tool not in tools]
    routes = {engine.name: engine.job_config["execution"]["default"] for engine in engines}
    environments[ROUTING_ENVIRONMENT] = {
        "runner": "dynamic",
        "type": "python",
        "rules_module": RULES_MODULE,
        "function": "environment_by_role",
        "routes": routes,
        "default_environment": routes[engines[0].name],
    }
    job_config = {"runners": runners, "execution": {"default": ROUTING_ENVIRONMENT, "environments": environments}}
    if tools:
        job_config["tools"] = tools
    first = engines[0]

    def stop() -> None:
        for engine in reversed(engines):
            engine.stop()

    return RunningEngine(
        name=",".join(engine.name for engine in engines),
        job_config=job_config,
        job_runner_log=first.job_runner_log,
        environ=merged_environ(engines),
        stopper=stop,
        details={
            "job_routes": {
                engine.name: {
                    "role": engine.name,
                    "default": engine is first,
                    "environment": routes[engine.name],
                    "job_runner_log": str(engine.job_runner_log) if engine.job_runner_log else None,
                    **engine.details,
                }
                for engine in engines
            }
        },
    )


def _merge(into: dict, entries: dict, what: str) -> None:
    for key, value in entries.items():
        if key in into and into[key] != value:
            raise ValueError(f"two job engines define the {what} {key!r} differently")
        into[key] = value


def merged_environ(engines: list[RunningEngine]) -> dict[str, str]:
    """Every engine's environment for Galaxy; PATH keeps each engine's own directories in front."""
    merged: dict[str, str] = {}
    for engine in engines:
        for key, value in engine.environ.items():
            if key == "PATH" and "PATH" in merged:
                known = merged["PATH"].split(":")
                value = ":".join([part for part in value.split(":") if part not in known] + known)
            merged[key] = value
    return merged
