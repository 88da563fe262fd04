# Trinity Desktop: developer entry points.
#
#   make run         create .venv if needed, install the project, open the window
#   make test        same setup, then the whole test suite (model, ui, architecture, e2e, bundle)
#   make screenshot  render the main window to docs/screenshot.png
#   make bundle      PyInstaller one-folder build into dist/trinity-desktop/
#   make installer   the bundle, then dist/trinity-desktop_<version>_amd64.deb and
#                    dist/trinity-desktop-<version>-linux-x86_64.tar.xz (needs dpkg-dev, xz-utils)
#   make lint        ruff check
#
# Works on a fresh clone with only python3 (>= 3.11) and make.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python
# Reinstalls whenever pyproject.toml changes (new dependency, new package-dir entry ...).
STAMP  := $(VENV)/.trinity-installed

# The `package` extra (PyInstaller) is installed too: `make test` builds the bundle.
EXTRAS ?= test,package

.DEFAULT_GOAL := help
.PHONY: help venv run test test-fast screenshot bundle installer lint clean

help:
	@echo "make run | test | test-fast | screenshot | bundle | installer | lint | clean"

$(PY):
	$(PYTHON) -m venv $(VENV)

# Editable install. The package-dir mapping (model/ -> trinity_desktop.model, ...) is served by
# setuptools' editable import hook; tests/test_architecture.py checks the built wheel separately.
$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -e '.[$(EXTRAS)]'
	$(PY) -c "import trinity_desktop, trinity_desktop.model, trinity_desktop.ui, trinity_desktop.resources"
	touch $@

venv: $(STAMP)

run: $(STAMP)
	$(BIN)/trinity-desktop

# On every core (pytest-xdist). A test whose worker process dies (a crash in Qt, not a failed assertion) is run
# once more on a fresh worker and reported as a rerun: `--only-rerun '(?!)'` is a pattern that matches no error
# message, so pytest-rerunfailures never reruns an ordinary failure. Rescheduling a crashed test needs a scheduler
# that can put it back (`--dist worksteal`, which also lets an idle worker take the back half of a busy one's
# queue: tests/long_first.py orders the suite for it); the packaging tests share one bundle build under a lock.
PYTEST_PARALLEL := -n auto --dist worksteal --reruns 1 --only-rerun '(?!)'

test: $(STAMP)
	$(PY) -m pytest $(PYTEST_PARALLEL)

# Everything except the slow wheel/bundle builds.
test-fast: $(STAMP)
	$(PY) -m pytest $(PYTEST_PARALLEL) -m "not slow"

screenshot: $(STAMP)
	mkdir -p docs
	QT_QPA_PLATFORM=$${QT_QPA_PLATFORM:-offscreen} $(BIN)/trinity-desktop --screenshot docs/screenshot.png

bundle: $(STAMP)
	PYTHON=$(abspath $(PY)) packaging/build_bundle.sh

# Linux installers from the bundle: the .deb (dpkg-deb, xz) and the portable .tar.xz with a launcher script.
installer: bundle
	$(PY) packaging/linux_installers.py --bundle dist/trinity-desktop --out dist

lint: $(STAMP)
	$(BIN)/ruff check .

clean:
	rm -rf build dist *.egg-info .pytest_cache .ruff_cache
