"""Several job engines behind one Galaxy (serve/engines/routes.py) and the rule that routes a job by its
user's roles (core/job_routes.py): pure configuration, no engine started."""

import pytest

from galaxy_mcp_analysis.core.job_routes import environment_for_roles
from galaxy_mcp_analysis.serve.engines import engine_names
from galaxy_mcp_analysis.serve.engines.base import RunningEngine
from galaxy_mcp_analysis.serve.engines.local import local_job_config
from galaxy_mcp_analysis.serve.engines.pulsar import job_config as pulsar_job_config
from galaxy_mcp_analysis.serve.engines.routes import (
    ROUTING_ENVIRONMENT,
    combined,
)
from galaxy_mcp_analysis.serve.engines.slurm import slurm_job_config
from galaxy_mcp_analysis.serve.job_routes.by_role import environment_by_role
from galaxy_mcp_analysis.serve.launcher import job_runner_line

ROUTES = {"local": "local", "slurm": "slurm", "pulsar": "pulsar"}


def test_a_role_named_after_an_engine_routes_there_and_no_role_to_the_default():
    assert environment_for_roles(["lab", "slurm"], ROUTES, "local") == "slurm"
    assert environment_for_roles(["lab"], ROUTES, "local") == "local"
    assert environment_for_roles([], ROUTES, "pulsar") == "pulsar"
    # Roles naming two engines: always the first by name, so one user's jobs never alternate.
    assert environment_for_roles(["slurm", "pulsar"], ROUTES, "local") == "pulsar"
    assert environment_for_roles(["pulsar", "slurm"], ROUTES, "local") == "pulsar"


class Role:
    def __init__(self, name):
        self.name = name


class User:
    def __init__(self, *roles):
        self.roles = [Role(name) for name in roles]

    def all_roles(self):
        return self.roles


def test_the_rule_galaxy_calls_reads_the_users_roles():
    assert environment_by_role(User("slurm"), ROUTES, "local") == "slurm"
    assert environment_by_role(None, ROUTES, "local") == "local"  # an anonymous user's job


def engines() -> tuple[list[RunningEngine], list[str]]:
    stopped = []
    return [
        RunningEngine("local", local_job_config(), stopper=lambda: stopped.append("local")),
        RunningEngine("slurm", slurm_job_config(), environ={"PATH": "/e/slurm/bin:/usr/bin", "SLURM_CONF": "/e/s"},
                      stopper=lambda: stopped.append("slurm")),
        RunningEngine("pulsar", pulsar_job_config("http://127.0.0.1:1/", "t"), stopper=lambda: stopped.append("pulsar"),
                      details={"pulsar_url": "http://127.0.0.1:1/"}),
    ], stopped


def test_combined_engines_keep_every_environment_and_route_by_role():
    started, stopped = engines()
    engine = combined(started)
    execution = engine.job_config["execution"]
    assert execution["default"] == ROUTING_ENVIRONMENT
    assert set(execution["environments"]) == {"local", "slurm", "pulsar", ROUTING_ENVIRONMENT}
    routing = execution["environments"][ROUTING_ENVIRONMENT]
    assert (routing["runner"], routing["function"], routing["default_environment"]) == (
        "dynamic", "environment_by_role", "local")
    assert routing["routes"] == ROUTES
    assert set(engine.job_config["runners"]) == {"local", "slurm", "pulsar"}
    # Pulsar's uploads stay on the local runner for every user.
    assert {tool["environment"] for tool in engine.job_config["tools"]} == {"local"}
    assert engine.environ == {"PATH": "/e/slurm/bin:/usr/bin", "SLURM_CONF": "/e/s"}
    described = engine.describe()
    assert described["job_runner"] == "local,slurm,pulsar"
    assert described["job_routes"]["pulsar"] == {"role": "pulsar", "default": False, "environment": "pulsar",
                                                 "job_runner_log": None, "pulsar_url": "http://127.0.0.1:1/"}
    assert described["job_routes"]["local"]["default"] is True
    engine.stop()
    assert stopped == ["pulsar", "slurm", "local"]  # the reverse of their start


def test_two_engines_defining_one_runner_differently_are_refused():
    local = RunningEngine("local", local_job_config())
    other = RunningEngine("slurm", {"runners": {"local": {"load": "elsewhere"}},
                                    "execution": {"default": "local", "environments": {}}})
    with pytest.raises(ValueError, match="runner 'local' differently"):
        combined([local, other])


def test_the_switch_names_each_known_engine_once():
    assert engine_names("slurm") == ["slurm"]
    assert engine_names(" local, pulsar ") == ["local", "pulsar"]
    for switch, message in (("", "name each engine once"), ("slurm,slurm", "name each engine once"),
                            ("local,kubernetes", "unknown job runner kubernetes")):
        with pytest.raises(ValueError, match=message):
            engine_names(switch)


def test_the_banner_says_who_runs_where():
    started, _ = engines()
    line = job_runner_line(combined(started).describe())
    assert line.splitlines() == [
        "Jobs   run by local,slurm,pulsar, by the user's role:",
        "       local: everyone else (the default)",
        "       slurm: users with the role 'slurm'",
        "       pulsar: users with the role 'pulsar'",
    ]
