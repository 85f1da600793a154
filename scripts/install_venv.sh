#!/usr/bin/env bash
# Create or update .venv from the lock, exactly: every package pinned and hash-checked,
# then the project itself (editable, no dependency resolution). Serialised with flock, so two
# first-time `make book` runs in one clone wait for each other instead of colliding.
# The installer is uv (itself hash-pinned by scripts/uv.lock.txt, in .cache/uv): about 19 s
# for the whole lock where pip took 5.5 minutes on the same loaded machine (BENCHMARKS.md, issue 28).
# pip installs the same lock when uv cannot be had.
# Bytecode is compiled last (scripts/compile_venv.sh), unless DEFER_BYTECODE=1: the Makefile then
# compiles it as `make bytecode`, beside the lab's build (BENCHMARKS.md, issue 28).
# Usage: [DEFER_BYTECODE=1] scripts/install_venv.sh VENV LOCK PYTHON
set -euo pipefail
venv=${1:?venv folder}; lock=${2:?lock file}; python=${3:?python interpreter}
stamp="$venv/.installed"
want=$(cat "$lock" pyproject.toml | sha256sum | cut -d' ' -f1)
uv_dir=.cache/uv  # the uv binary, installed by the interpreter's pip (a venv of its own costs 20 s)
mkdir -p "$(dirname "$venv")" .cache
exec 9>"$venv.lock"
flock 9
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
# --without-pip: uv installs the lock, so the venv's own pip (ensurepip: about 6 s) is made only if uv
# cannot be had; uv itself is installed by the interpreter's pip.
[ -x "$venv/bin/python" ] || "$python" -m venv --without-pip "$venv"
if [ -x "$uv_dir/bin/uv" ] || "$python" -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
  --require-hashes --no-deps --target "$uv_dir" -r scripts/uv.lock.txt; then
  uv=("$uv_dir/bin/uv" pip)
  # No --compile-bytecode: uv's compiles the packages' test folders too (a third of their source);
  # compile_venv.sh leaves them out.
  "${uv[@]}" install --quiet --python "$venv/bin/python" --require-hashes --no-deps -r "$lock"
  "${uv[@]}" install --quiet --python "$venv/bin/python" --no-deps --no-build-isolation -e .
  "${uv[@]}" check --quiet --python "$venv/bin/python"
else
  echo "uv could not be installed: installing the lock with pip (slower)" >&2
  pip=("$venv/bin/python" -m pip)
  "$venv/bin/python" -m pip --version >/dev/null 2>&1 || "$venv/bin/python" -m ensurepip --default-pip >/dev/null
  "${pip[@]}" install --quiet --disable-pip-version-check --require-hashes --no-deps -r "$lock"
  "${pip[@]}" install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
  "${pip[@]}" check
fi
rm -f "$venv/.compiled"
[ "${DEFER_BYTECODE:-0}" = 1 ] || scripts/compile_venv.sh "$venv"
echo "$want" > "$stamp"
