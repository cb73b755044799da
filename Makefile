# Two commands do all the set-up on a fresh Debian machine (Python 3.11, root, no GPU):
#   make lab    install what is missing, then open JupyterLab on the quickstart notebook
#   make test   install what is missing, then run every test
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# Debian packages: dot for rendering, Mesa's software Vulkan for read/write facts and Vulkan tests,
# a C compiler for the exported host programs, Chromium for the widget's end-to-end tests.
DEB_PACKAGES := graphviz mesa-vulkan-drivers libvulkan1 gcc g++ libc6-dev cmake chromium
BUNDLE := graphlab/widget/static/widget.js
# The graph file viewer's prebuilt JupyterLab extension (labextension/, built with jupyter-builder).
LABEXT := labextension/dist
LAB_PORT ?= 8888

.PHONY: lab test system python frontend wheel lint pytest clean

system:
	@missing=""; for p in $(DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	command -v npm >/dev/null 2>&1 || missing="$$missing nodejs npm"; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[dev]"
	touch $@

python: $(STAMP)

frontend: $(STAMP)
	@if [ -f extension/package.json ]; then \
	  [ extension/node_modules/.package-lock.json -nt extension/package-lock.json ] || \
	    (cd extension && npm ci --no-audit --no-fund --loglevel=error); \
	  (cd extension && npm run --silent build); \
	fi
	@[ labextension/node_modules/.package-lock.json -nt labextension/package-lock.json ] || \
	  (cd labextension && npm ci --no-audit --no-fund --loglevel=error)
	@[ -f $(LABEXT)/package.json ] && [ -z "$$(find labextension/src labextension/style labextension/package.json -newer $(LABEXT)/package.json)" ] || \
	  (cd labextension && PATH="$(CURDIR)/$(VENV)/bin:$$PATH" npm run --silent build)
	@# the graph file viewer where the wheel installs it (pyproject's shared-data): the editable
	@# install above ran before the first build, so copy the build (a link would let pip delete it)
	@rm -rf $(VENV)/share/jupyter/labextensions/graphlab-fileview
	@mkdir -p $(VENV)/share/jupyter/labextensions $(VENV)/etc/jupyter/jupyter_server_config.d
	@cp -r $(LABEXT) $(VENV)/share/jupyter/labextensions/graphlab-fileview
	@cp jupyter-config/jupyter_server_config.d/graphlab.json $(VENV)/etc/jupyter/jupyter_server_config.d/

# The wheel a user installs (the widget's bundle and the file viewer's lab extension inside, see pyproject),
# built once per `make test`: tests/e2e/test_wheel_install_e2e.py installs it into a fresh venv, no npm on PATH.
WHEEL_DIR := build/wheel

wheel: python frontend
	rm -rf $(WHEEL_DIR)
	$(PY) -m pip wheel -q --no-deps -w $(WHEEL_DIR) .

lint: python frontend
	$(VENV)/bin/ruff check graphlab tests bench
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports --no-cache
	@if [ -f extension/package.json ]; then (cd extension && npm run --silent typecheck && npm run --silent lint && npm run --silent format:check && npm run --silent test); fi
	cd labextension && npm run --silent typecheck && npm run --silent lint && npm run --silent format:check

# Taichi's offline cache can hand a kernel compiled by an older checkout back to a newer one with
# another parameter list ("argument not found"): every test run starts from its own empty cache.
TEST_TICACHE := build/ticache-test

# The suite runs as a few pytest processes, one after another (every file still runs), so one test's
# Taichi state cannot reach a test far later: late in one long process Taichi's own kernels failed
# with "argument not found" (likely an ndarray of an old runtime deleted by a new one, which
# graphlab.bridge.runtime now prevents). Processes are groups of test folders (tests/<package>/) of
# about the same run time; a folder not named below runs in the last group. A failing group does not
# stop the others.
TEST_DIRS := $(patsubst %/,%,$(sort $(dir $(wildcard tests/*/test_*.py))))
TEST_GROUP_DEBUG := tests/debug
TEST_GROUP_SHIP := tests/deploy tests/cli tests/fileview tests/widget
TEST_GROUPS := "tests/e2e graphlab" "$(TEST_GROUP_DEBUG)" "$(TEST_GROUP_SHIP)" \
  "$(filter-out tests/e2e $(TEST_GROUP_DEBUG) $(TEST_GROUP_SHIP),$(TEST_DIRS))"

pytest: system python frontend wheel
	rm -rf $(TEST_TICACHE)
	@failed=0; for group in $(TEST_GROUPS); do \
	  echo "pytest $$group" | cut -c1-100; \
	  GRAPHLAB_WHEEL=$$(ls $(CURDIR)/$(WHEEL_DIR)/graphlab-*.whl) \
	  TI_OFFLINE_CACHE_FILE_PATH=$(CURDIR)/$(TEST_TICACHE) $(PY) -m pytest $$group || failed=1; \
	done; exit $$failed

test: system python frontend lint pytest

lab: system python frontend
	$(VENV)/bin/jupyter lab --no-browser --ip=127.0.0.1 --port=$(LAB_PORT) --ServerApp.root_dir=$(CURDIR) \
	  $$([ "$$(id -u)" = 0 ] && echo --allow-root) notebooks/quickstart.ipynb

clean:
	rm -rf $(VENV) extension/node_modules $(BUNDLE) labextension/node_modules labextension/lib $(LABEXT)
