"""uvicorn app factory: Galaxy's own factory with the patch set applied first.

    GALAXY_CONFIG_FILE=galaxy.yml uvicorn --factory galaxy_mcp_analysis.fast_factory:factory

Using Galaxy's ``galaxy.webapps.galaxy.fast_factory:factory`` instead is the off switch.
"""

from galaxy_mcp_analysis.activation import activate


def factory():
    activate()
    from galaxy.webapps.galaxy.fast_factory import factory as galaxy_factory

    return galaxy_factory()
