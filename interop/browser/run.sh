#!/usr/bin/env bash
# The dashboard's browser test: Heureka's release binary, a real py-eureka-client, and the
# dashboard driven in Debian's headless Chromium through playwright-core.
#
#   interop/browser/run.sh                                  # builds heureka unless HEUREKA_BIN is set
#   SCREENSHOTS=docs/screenshots interop/browser/run.sh     # also refreshes the committed screenshots
#
# Installs what is missing: Debian's chromium (apt-get), playwright-core from the committed
# package-lock.json (npm ci, no browser download), interop/.venv with the pinned py-eureka-client.
# Everything listens on 127.0.0.1 only.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
step() { printf '\n==> %s\n' "$*"; }

if ! command -v chromium >/dev/null 2>&1; then
    step "installing chromium (Debian)"
    if [ "$(id -u)" -eq 0 ]; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    else
        sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    fi
fi

step "npm ci (interop/browser)"
if [ ! -d "$HERE/node_modules/playwright-core" ]; then
    # playwright-core ships no browser and downloads none: the test drives Debian's chromium.
    (cd "$HERE" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
else
    echo "up to date"
fi

step "python venv (interop/.venv)"
VENV="$REPO/interop/.venv"
if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c 'import py_eureka_client' 2>/dev/null; then
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$REPO/interop/requirements.txt"
else
    echo "up to date"
fi

if [ -z "${HEUREKA_BIN:-}" ]; then
    step "cargo build --release -p heureka"
    (cd "$REPO" && cargo build --release -q -p heureka)
    HEUREKA_BIN="$REPO/target/release/heureka"
fi

step "dashboard in headless chromium"
export HEUREKA_BIN PYTHON="$VENV/bin/python" PY_CLIENT="$REPO/interop/clients/py_client.py"
export SCREENSHOTS="${SCREENSHOTS:-$HERE/out}"
case "$SCREENSHOTS" in /*) ;; *) SCREENSHOTS="$REPO/$SCREENSHOTS" ;; esac
mkdir -p "$SCREENSHOTS"
exec node "$HERE/dashboard.test.js"
