#!/usr/bin/env bash
# Makes sure podman has the Dockerfile's base image, docker.io/library/node:20-bookworm-slim, and
# prints its name. Where the registry answers, that is the official image, pulled. Where no
# registry can be reached (our CI machines), it makes a stand-in under the same name: a Debian
# bookworm minbase root (debootstrap) with this machine's Node.js 20 copied where the official
# image has it (/usr/local), and this machine's CA bundle, since its registries are reached through
# a certificate authority of its own. The Dockerfile stays the ordinary one and is built unchanged
# with `podman build --pull=never`.
#
# Idempotent and cached: an image present (pulled, or a stand-in of this machine's Node.js
# version) is reused; the debootstrap root (~200 MB, about a minute) is made once.
#
#   DESKLINE_CACHE_DIR   where the debootstrap root lives (default: ${XDG_CACHE_HOME:-~/.cache}/deskline)
#   DEBOOTSTRAP_MIRROR   the Debian mirror (default: http://deb.debian.org/debian)
#   CONTAINERS_CONF      podman's settings (default: scripts/container/containers.conf: runc, cgroupfs)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
export CONTAINERS_CONF="${CONTAINERS_CONF:-$here/containers.conf}"
image="docker.io/library/node:20-bookworm-slim"
log() { echo "base-image: $*" >&2; }

node_version="$(node --version)"
stand_in_label() {
  podman image inspect --format '{{ index .Labels "deskline.stand-in.node" }}' "$image" 2>/dev/null || true
}

if podman image exists "$image"; then
  label="$(stand_in_label)"
  # A pulled image has no such label; a stand-in is remade when this machine's Node.js changed.
  if [ -z "$label" ] || [ "$label" = "<no value>" ] || [ "$label" = "$node_version" ]; then
    echo "$image"
    exit 0
  fi
  log "the stand-in holds Node.js $label, this machine has $node_version: making it anew"
elif timeout 180 podman pull --quiet "$image" >/dev/null 2>&1; then
  log "pulled the official $image"
  echo "$image"
  exit 0
else
  log "$image cannot be pulled here: making a stand-in (debootstrap bookworm + this machine's Node.js)"
fi

case "$node_version" in
v20.*) ;;
*)
  log "the stand-in needs Node.js 20 on this machine (the Dockerfile's node:20), found $node_version"
  exit 1
  ;;
esac
for tool in debootstrap tar; do
  command -v "$tool" >/dev/null || {
    log "'$tool' is required (Debian: apt-get install -y debootstrap)"
    exit 1
  }
done

cache="${DESKLINE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/deskline}/container-base"
rootfs="$cache/bookworm-minbase"
# `.complete` is written last, so an interrupted debootstrap is never taken for a finished one.
if [ ! -f "$rootfs.complete" ]; then
  rm -rf "$rootfs"
  mkdir -p "$cache"
  log "debootstrap --variant=minbase bookworm → $rootfs"
  debootstrap --variant=minbase bookworm "$rootfs" "${DEBOOTSTRAP_MIRROR:-http://deb.debian.org/debian}" >&2
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  touch "$rootfs.complete"
fi

# Node.js, npm and corepack where the official image has them. The node binary runs on bookworm's
# libraries (it links only glibc, libstdc++ and friends).
node_bin="$(readlink -f "$(command -v node)")"
node_modules="$(dirname "$(dirname "$node_bin")")/lib/node_modules"
rm -rf "$rootfs/usr/local/lib/node_modules"
mkdir -p "$rootfs/usr/local/bin" "$rootfs/usr/local/lib/node_modules" "$rootfs/etc/ssl/certs"
cp "$node_bin" "$rootfs/usr/local/bin/node"
for tool in npm corepack; do
  [ -d "$node_modules/$tool" ] && cp -a "$node_modules/$tool" "$rootfs/usr/local/lib/node_modules/"
done
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
ln -sf ../lib/node_modules/corepack/dist/corepack.js "$rootfs/usr/local/bin/corepack"
cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"

tar -C "$rootfs" -c . | podman import \
  --change "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
  --change "ENV NODE_VERSION=${node_version#v}" \
  --change "ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt" \
  --change "LABEL deskline.stand-in.node=$node_version" \
  --change 'CMD ["node"]' \
  - "$image" >/dev/null
log "made the stand-in $image (Node.js $node_version)"
echo "$image"
