#!/usr/bin/env bash
# Installs podman-compose (which reads compose.yaml for podman; the container test runs its
# `config` command, which Debian 12's podman-compose 1.0.3 lacks) from PyPI into its own virtual
# environment, pinned. Idempotent: an environment of the same version is reused. Prints the path
# of the `podman-compose` executable on its last line.
#
#   --check              install nothing: print the executable's path if it is installed, else fail
#
#   DESKLINE_CACHE_DIR   where installs live (default: ${XDG_CACHE_HOME:-~/.cache}/deskline)
set -euo pipefail

version="1.6.0"
cache="${DESKLINE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/deskline}"
venv="$cache/podman-compose-$version"
bin="$venv/bin/podman-compose"

# `.complete` is written last, so an interrupted install is never taken for one.
if [ -f "$venv/.complete" ] && [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi
if [ "${1:-}" = "--check" ]; then
  echo "install-podman-compose: not installed; run: bash scripts/container/install-podman-compose.sh" >&2
  exit 1
fi
if ! python3 -c 'import sys, venv; sys.exit(sys.version_info < (3, 9))' >/dev/null 2>&1; then
  echo "install-podman-compose: needs Python 3.9+ with venv (Debian: apt-get install -y python3-venv)" >&2
  exit 1
fi

echo "install-podman-compose: podman-compose $version → $venv" >&2
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "podman-compose==$version"
touch "$venv/.complete"
echo "$bin"
