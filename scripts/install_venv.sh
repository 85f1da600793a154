#!/usr/bin/env bash
# Create or update .venv from the lock, exactly: every package pinned and hash-checked,
# then the project itself (editable, no dependency resolution). Serialised with flock, so two
# first-time `make book` runs in one clone wait for each other instead of colliding.
# Usage: scripts/install_venv.sh VENV LOCK PYTHON
set -euo pipefail
venv=${1:?venv folder}; lock=${2:?lock file}; python=${3:?python interpreter}
stamp="$venv/.installed"
want=$(cat "$lock" pyproject.toml | sha256sum | cut -d' ' -f1)
mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
flock 9
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --require-hashes --no-deps -r "$lock"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
"$venv/bin/python" -m pip check
echo "$want" > "$stamp"
