#!/usr/bin/env bash
# Installs a Python tool the tests run (Schemathesis, openapi-python-client) into its own virtual
# environment from PyPI, pinned by scripts/<tool>/requirements.txt; install-<tool>.sh call it.
# Idempotent: an environment made from the same requirements is reused. Prints the path of the
# tool's executable (`<venv>/bin/<tool>`; the venv's `python` sits beside it) on its last line.
#
#   install-python-tool.sh <tool> [--check]
#   --check              install nothing: print the executable's path if it is installed, else fail
#
#   DESKLINE_CACHE_DIR   where installs live (default: ${XDG_CACHE_HOME:-~/.cache}/deskline)
set -euo pipefail

tool="${1:?usage: install-python-tool.sh <tool> [--check]}"
shift
requirements="$(cd "$(dirname "$0")" && pwd)/$tool/requirements.txt"
cache="${DESKLINE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/deskline}"
# Named after what it is built from, so a changed pin installs anew beside the old one.
stamp=$(sha256sum "$requirements" | cut -c1-16)
venv="$cache/$tool-$stamp"
bin="$venv/bin/$tool"

# `.complete` is written last, so an interrupted install is never taken for one.
if [ -f "$venv/.complete" ] && "$bin" --version >/dev/null 2>&1; then
  echo "$bin"
  exit 0
fi
if [ "${1:-}" = "--check" ]; then
  echo "install-$tool: not installed; run: bash scripts/install-$tool.sh" >&2
  exit 1
fi

# Python 3.12 or newer for every tool: CPython 3.11.7's ast.parse fails inside Hypothesis ("AST
# constructor recursion depth mismatch") during Schemathesis' coverage phase. pyenv's versions count.
python=""
candidates=(python3.13 python3.12 python3)
if command -v pyenv >/dev/null 2>&1; then
  for dir in "$(pyenv root)"/versions/3.1[2-9]*; do [ -x "$dir/bin/python3" ] && candidates+=("$dir/bin/python3"); done
fi
for candidate in "${candidates[@]}"; do
  if "$candidate" -c 'import sys, venv; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1; then
    python="$candidate"
    break
  fi
done
if [ -z "$python" ]; then
  echo "install-$tool: needs Python 3.12+ with venv (found none)" >&2
  exit 1
fi

echo "install-$tool: $("$python" --version) → $venv" >&2
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements"
"$bin" --version >&2
touch "$venv/.complete"
echo "$bin"
