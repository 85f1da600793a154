#!/usr/bin/env bash
# Bytecode for every package installed in VENV but their test folders (uv installs without it): with
# PYTHONDONTWRITEBYTECODE set, as in CI, a process would otherwise compile the stack from source each
# time it starts. compileall of the venv's own interpreter, on every core; a file it cannot compile is
# left to the import that needs it (the log says which). Then the stamp VENV/.compiled.
# Usage: scripts/compile_venv.sh VENV
set -euo pipefail
venv=${1:?venv folder}
purelib=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
if ! "$venv/bin/python" -m compileall -q -j 0 -x '/tests?/' "$purelib" > "$venv/compileall.log" 2>&1; then
  echo "bytecode: some files did not compile (see $venv/compileall.log)" >&2
fi
touch "$venv/.compiled"
