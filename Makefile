# The two commands a newcomer needs: `make serve` and `make test` (see README.md).
PYTHON ?= python3
VENV ?= .venv
PORT ?= 8080
DATA_DIR ?= .galaxy
# Where Galaxy's jobs run: local (Galaxy's local runner), slurm or pulsar (doc/admin-guide.md, "Job engines"),
# or several comma-separated (local,slurm,pulsar: the first is the default; a user with a role named after
# another engine runs there). Each engine's .ci/install-<name> script runs first (a no-op when installed).
JOB_RUNNER ?= local
comma := ,
DATABASE_URL ?=
TOOL_CONF ?=
PYTEST_ARGS ?=
INSTALLED := $(VENV)/.installed

.PHONY: install serve test clean-data

# Reinstalled whenever the pins or the package metadata change.
$(INSTALLED): setup.cfg pyproject.toml constraints.txt
	@test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[galaxy,test]'
	@touch $@

install: $(INSTALLED)

serve: $(INSTALLED)
	@for engine in $(subst $(comma), ,$(JOB_RUNNER)); do \
		if [ -f .ci/install-$$engine ]; then bash .ci/install-$$engine || exit 1; fi; done
	$(VENV)/bin/python -m galaxy_mcp_analysis.serve --data-dir "$(DATA_DIR)" --port "$(PORT)" \
		--job-runner "$(JOB_RUNNER)" \
		$(if $(DATABASE_URL),--database-url "$(DATABASE_URL)") $(if $(TOOL_CONF),--tool-conf "$(TOOL_CONF)")

test: $(INSTALLED)
	$(VENV)/bin/python -m pytest $(PYTEST_ARGS)

clean-data:
	rm -rf "$(DATA_DIR)"

# Would the preflight refuse any <tests> case of the served toolbox (and TOOL_CONF's tools)? Runs nothing.
.PHONY: check-toolbox
check-toolbox: $(INSTALLED)
	TOOL_CONF="$(TOOL_CONF)" $(VENV)/bin/python -m galaxy_mcp_analysis.cli check-toolbox

# The production shape (doc/admin-guide.md, "Running at scale"): gravity's galaxyctl starts gunicorn
# (2 workers, the patch set's worker class), 2 job handlers, a Celery worker and beat on a throw-away
# Redis, on a throw-away PostgreSQL (or DATABASE_URL). Needs .ci/install-postgresql and
# .ci/install-redis. Ctrl-C runs galaxyctl stop; PRODUCTION_DATA_DIR is emptied at the next start.
PRODUCTION_DATA_DIR ?= .galaxy-production
.PHONY: serve-production
serve-production: $(INSTALLED)
	@for engine in $(subst $(comma), ,$(JOB_RUNNER)); do \
		if [ -f .ci/install-$$engine ]; then bash .ci/install-$$engine || exit 1; fi; done
	$(VENV)/bin/python -m galaxy_mcp_analysis.testing.production --data-dir "$(PRODUCTION_DATA_DIR)" --port "$(PORT)" \
		--job-runner "$(JOB_RUNNER)" $(if $(DATABASE_URL),--database-url "$(DATABASE_URL)")

# Every benchmark section on the full sizes (about 25 minutes); a quick look, for instance:
#   make bench BENCH_ARGS="--only reading,overhead --size-mib 64 --reps 10"
# Figures are printed (ratios last), never asserted; see doc/performance.md.
BENCH_ARGS ?=
.PHONY: bench
bench: $(INSTALLED)
	$(VENV)/bin/python bench/run.py $(BENCH_ARGS)

# doc/tools.md from the live tools/list of a Galaxy with the patch set (test_every_tool.py fails when stale).
.PHONY: tools-doc
tools-doc: $(INSTALLED)
	$(VENV)/bin/python -m galaxy_mcp_analysis.testing.tools_reference --output doc/tools.md

# The patch set on another Galaxy 26.1 release, in its own virtualenv (.venv-galaxy-<release>):
# self-checks, unit and foundation tests, the field-report replay. See doc/testing.md.
GALAXY ?=
.PHONY: verify-release
verify-release:
	@test -n "$(GALAXY)" || { echo "usage: make verify-release GALAXY=26.1.0" >&2; exit 2; }
	$(PYTHON) .ci/verify-release "$(GALAXY)" $(if $(BASETEMP),--basetemp "$(BASETEMP)") $(if $(PYTEST_ARGS),-- $(PYTEST_ARGS))
