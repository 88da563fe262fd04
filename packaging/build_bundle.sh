#!/usr/bin/env bash
# Build the PyInstaller one-folder bundle: dist/trinity-desktop/trinity-desktop
#
#   packaging/build_bundle.sh                 clean build venv (build/bundle-venv) with '.[package]'
#   PYTHON=.venv/bin/python packaging/build_bundle.sh   use an existing environment (make bundle)
#
# Environment: PYTHON (interpreter to build with), DIST (default: dist), WORK (default:
# build/pyinstaller). Prints the bundle size at the end.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
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
    "$PYTHON" -m pip install "$ROOT[package]"
elif ! "$PYTHON" -c "import PyInstaller" 2>/dev/null; then
    # Same PyInstaller requirement as the `package` extra in pyproject.toml.
    spec="$("$PYTHON" - "$ROOT/pyproject.toml" <<'PY'
import sys, tomllib
extra = tomllib.load(open(sys.argv[1], "rb"))["project"]["optional-dependencies"]["package"]
print(next(r for r in extra if r.lower().startswith("pyinstaller")))
PY
)"
    "$PYTHON" -m pip install "$spec"
fi

"$PYTHON" -m PyInstaller --version
start=$(date +%s)
"$PYTHON" -m PyInstaller --noconfirm --clean --log-level WARN \
    --distpath "$DIST" --workpath "$WORK" "$ROOT/packaging/trinity.spec"
end=$(date +%s)

echo "bundle: $DIST/trinity-desktop"
echo "build time: $((end - start)) s"
du -sh "$DIST/trinity-desktop"
