#!/usr/bin/env bash
# Builds the root Dockerfile with podman into TAG (default localhost/deskline-server:latest, the
# name compose.yaml uses) and prints TAG on its last line; podman's output goes to stderr. The base
# image is made sure of first (scripts/container/base-image.sh: pulled, or the stand-in where no
# registry answers), so the build never pulls. Layers are cached: a build without changes takes
# seconds, a code change rebuilds only the build step (dependencies stay in their layer).
#
#   CONTAINERS_CONF      podman's settings (default: scripts/container/containers.conf: runc, cgroupfs)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
export CONTAINERS_CONF="${CONTAINERS_CONF:-$here/containers.conf}"
tag="${1:-localhost/deskline-server:latest}"

bash "$here/base-image.sh" >/dev/null
# --format docker: an OCI image has no HEALTHCHECK, podman would drop it. --network host: pnpm in
# the build reaches the package registry the way this machine does.
podman build --format docker --network host --pull=never -t "$tag" "$here/../.." >&2
echo "$tag"
