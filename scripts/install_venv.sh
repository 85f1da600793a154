#!/usr/bin/env bash
# Create or update .venv from the lock, exactly: every package pinned and hash-checked,
# then the project itself (editable, no dependency resolution). Serialised with flock, so two
# first-time `make book` runs in one clone wait for each other instead of colliding.
# The installer is uv (itself hash-pinned by scripts/uv.lock.txt, in .cache/uv): about 19 s
# for the whole lock where pip took 5.5 minutes on the same loaded machine (BENCHMARKS.md, issue 28).
# pip installs the same lock when uv cannot be had.
# Usage: scripts/install_venv.sh VENV LOCK PYTHON
set -euo pipefail
venv=${1:?venv folder}; lock=${2:?lock file}; python=${3:?python interpreter}
stamp="$venv/.installed"
want=$(cat "$lock" pyproject.toml | sha256sum | cut -d' ' -f1)
uv_dir=.cache/uv  # the uv binary, installed by .venv's pip (a venv of its own costs 20 s)
mkdir -p "$(dirname "$venv")" .cache
exec 9>"$venv.lock"
flock 9
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
if [ -x "$uv_dir/bin/uv" ] || "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  --require-hashes --no-deps --target "$uv_dir" -r scripts/uv.lock.txt; then
  uv=("$uv_dir/bin/uv" pip)
  # --compile-bytecode: uv writes no .pyc by default (pip does); with PYTHONDONTWRITEBYTECODE set,
  # as in CI, every process would then compile the whole stack from source (BENCHMARKS.md, issue 28).
  "${uv[@]}" install --quiet --python "$venv/bin/python" --require-hashes --no-deps --compile-bytecode -r "$lock"
  "${uv[@]}" install --quiet --python "$venv/bin/python" --no-deps --no-build-isolation -e .
  "${uv[@]}" check --quiet --python "$venv/bin/python"
else
  echo "uv could not be installed: installing the lock with pip (slower)" >&2
  pip=("$venv/bin/python" -m pip)
  "${pip[@]}" install --quiet --disable-pip-version-check --require-hashes --no-deps -r "$lock"
  "${pip[@]}" install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
  "${pip[@]}" check
fi
echo "$want" > "$stamp"
