# The two quickstart commands: `make demo` (set up + run the demo) and `make test`.
# Everything installs into ./.venv from this repo's own files; constraints.txt pins every
# package (torch is pinned exactly: a range would pull a multi-GB CUDA build).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-all fuzz install lint clean screenshot agents

demo: $(STAMP)
	$(BIN)/workbench demo

# The suite. A plain `make test` is the fast tier: every test but the long end-to-end ones
# marked `slow` (the agents' own CLIs from npm, PostgreSQL, Chromium, marimo runs, the
# embedding worker, mypy, stress runs; tests/conftest.py), on TEST_WORKERS parallel
# pytest-xdist workers, each taking a whole test file at a time so a file's module-scoped
# service still starts once (issue 23: the tests mostly wait on the services, hooks and CLIs
# they start as real processes). `make test-all` runs every tier. CI (CI set: .ci/run exports
# it) runs every tier too, on two workers, one per core of CI's 2-core machine: serially the
# whole suite took 61 min in CI (stop 48, 3,645 s of a 90 min limit), on two workers 33 min on
# the same kind of host, all green.
TEST_WORKERS ?= $(if $(CI),2,3)
test: $(STAMP)
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile

test-all: $(STAMP)
	WORKBENCH_TEST_ALL=1 $(MAKE) test

# The agents' own CLIs from npm at the versions the real-agent tests pin (tests/real_agents.py),
# into .venv/share/real-agents (the MCP-only ones, Copilot CLI, into real-agents-mcp-only);
# the first real-agent test does it too when this was not run.
agents: $(STAMP)
	$(BIN)/python -m tests.real_agents

# The property-based fuzz suite (every tests/test_fuzz_*.py: routes, hook stdin, agent configs,
# code tools...) with the long Hypothesis profile: twenty times the examples `make test` runs,
# new random ones each run. Minutes, not seconds.
fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=fuzz $(BIN)/python -m pytest tests/test_fuzz_*.py

# Refresh the README picture (docs/screenshot.png): the viewer test's screenshot of the demo
# memory in headless Chromium. Written beside it first, so a failed run keeps the old picture
# and a skipped one (no /usr/bin/chromium: apt-get install -y chromium) fails here.
SCREENSHOT ?= docs/screenshot.png
screenshot: $(STAMP)
	rm -f $(SCREENSHOT:.png=.new.png)
	VIEWER_SCREENSHOT=$(SCREENSHOT:.png=.new.png) $(BIN)/python -m pytest -q -p no:randomly \
		tests/test_viewer_browser.py::test_screenshot_of_the_feed_with_demo_data
	mv $(SCREENSHOT:.png=.new.png) $(SCREENSHOT)

install: $(STAMP)

# The recipe too: a new fine-tuned MiniLM (its sha256 is in the recipe) is installed by
# `make install` in a venv that has the old one.
$(STAMP): pyproject.toml constraints.txt workbench/recall/minilm_tuned/recipe.json
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# torch first, from the CPU build: installed by a dependency it could become a CUDA build.
	$(BIN)/python -m pip install -q -c constraints.txt torch==2.13.0
	$(BIN)/python -m pip install -q -c constraints.txt -e '.[dev]'
	# The int8 ONNX MiniLM, fine-tuned, shipped in workbench/recall/minilm_tuned (offline, ~1 s),
	# and the static model distilled from it (~30 s): the service embeds with them and never
	# loads torch. Idempotent; without them recall falls back to torch and says so.
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/workbench models build
	touch $(STAMP)

# mypy reads its settings (files: workbench/, service/, hooks/) from pyproject.toml; the suite
# runs it too (tests/test_types.py), so CI enforces it.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

clean:
	rm -rf $(VENV) .demo
