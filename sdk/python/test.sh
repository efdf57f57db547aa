#!/usr/bin/env bash
# The Python SDK's checks, from anywhere: mypy --strict on the package, then pytest (the shared
# protocol vectors against a fake agent, and the real engine through the Node CLI). .ci/run calls it.
# Extra arguments go to pytest, e.g. `sdk/python/test.sh -k vectors`.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
python="${PYTHON:-python3}"

missing=()
"$python" -c 'import pytest' 2>/dev/null || missing+=(pytest)
"$python" -c 'import mypy' 2>/dev/null || missing+=(mypy)
if [ ${#missing[@]} -gt 0 ]; then
  if "$python" -m pip --version >/dev/null 2>&1; then
    # A Debian system Python refuses plain installs (PEP 668); these two are test tools only.
    "$python" -m pip install --quiet "${missing[@]}" 2>/dev/null ||
      "$python" -m pip install --quiet --user --break-system-packages "${missing[@]}"
  else
    sudo=()
    if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
    "${sudo[@]}" apt-get update
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y python3-pytest mypy
  fi
fi

# The engine tests run the CLI from dist/: build it when it is missing or older than a source file.
if [ ! -f "$repo/dist/cli/main.js" ] || [ -n "$(find "$repo/src" -newer "$repo/dist/cli/main.js" -print -quit)" ]; then
  (cd "$repo" && npm run build)
fi

cd "$here"
"$python" -m mypy --strict src/hyperspool
"$python" -m pytest tests "$@"
