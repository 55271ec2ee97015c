"""The rule ``environment_by_role``: a job goes to the engine named by a role of its user."""

from galaxy_mcp_analysis.core.job_routes import environment_for_roles


def environment_by_role(user, routes: dict, default_environment: str) -> str:
    """Galaxy passes ``user`` (the job's owner, None for an anonymous one); ``routes`` and
    ``default_environment`` are the routing environment's own parameters."""
    roles = [role.name for role in user.all_roles()] if user is not None else []
    return environment_for_roles(roles, routes, default_environment)
