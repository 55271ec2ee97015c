"""Which job environment a user's jobs go to when one Galaxy routes to several engines: the engine a
role of the user names, else the default (serve/job_routes, the rule Galaxy calls)."""

from collections.abc import Iterable, Mapping


def environment_for_roles(role_names: Iterable[str], routes: Mapping[str, str], default_environment: str) -> str:
    """``routes``: role name -> environment id. A user with roles naming several engines gets the first
    by name, so one user's jobs never alternate between engines."""
    named = sorted(set(role_names) & set(routes))
    return routes[named[0]] if named else default_environment
