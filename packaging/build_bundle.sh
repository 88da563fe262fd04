#!/usr/bin/env bash
# Build the PyInstaller one-folder bundle: dist/trinity-desktop/trinity-desktop
#
#   packaging/build_bundle.sh                 clean build venv (build/bundle-venv) with '.[package]'
#   PYTHON=.venv/bin/python packaging/build_bundle.sh   use an existing environment (make bundle)
#
# Environment: PYTHON (interpreter to build with), DIST (default: dist), WORK (default:
# build/pyinstaller). Prints the bundle size at the end.
#
# What goes into the bundle is locked: packaging/requirements-bundle.lock pins every runtime and build
# dependency with its hashes for Linux, Windows and macOS (regenerate it with
#   uv pip compile pyproject.toml --extra package --universal --generate-hashes --python-version 3.11 \
#       -o packaging/requirements-bundle.lock
# after changing a dependency in pyproject.toml); pip installs it with --require-hashes, so two builds a month
# apart bundle the same files, and a changed or substituted wheel stops the build.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LOCK="$ROOT/packaging/requirements-bundle.lock"
DIST="${DIST:-$ROOT/dist}"
WORK="${WORK:-$ROOT/build/pyinstaller}"

if [ -z "${PYTHON:-}" ]; then
    # Clean venv, one Qt binding only, the project installed non-editable with the package extra.
    VENV="${BUNDLE_VENV:-$ROOT/build/bundle-venv}"
    if [ ! -x "$VENV/bin/python" ]; then
        "${BASE_PYTHON:-python3}" -m venv "$VENV"
    fi
    PYTHON="$VENV/bin/python"
    "$PYTHON" -m pip install --upgrade pip
    "$PYTHON" -m pip install --require-hashes --no-deps -r "$LOCK"
    "$PYTHON" -m pip install --no-deps --no-build-isolation "$ROOT"   # the app itself, nothing resolved again
else
    # An existing environment (make bundle): its bundled dependencies brought to the locked versions
    "$PYTHON" -m pip install --require-hashes --no-deps -r "$LOCK"
fi

"$PYTHON" -m PyInstaller --version
start=$(date +%s)
"$PYTHON" -m PyInstaller --noconfirm --clean --log-level WARN \
    --distpath "$DIST" --workpath "$WORK" "$ROOT/packaging/trinity.spec"
end=$(date +%s)

echo "bundle: $DIST/trinity-desktop"
echo "build time: $((end - start)) s"
du -sh "$DIST/trinity-desktop"
