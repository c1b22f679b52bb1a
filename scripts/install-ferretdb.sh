#!/usr/bin/env bash
# Installs FerretDB 1.24.2 (a MongoDB wire-compatible server on SQLite) from the Go module proxy,
# for machines where mongodb-memory-server cannot download a real mongod (DESIGN.md §2).
#
# A plain `go install …/cmd/ferretdb@v1.24.2` builds a binary that panics at start: FerretDB reads
# its version from build/version/version.txt, which `git describe` writes in their repository and
# the module zip does not contain. So we build from a copy of the module with that file restored.
#
# Prints the path of the binary on its last line. Idempotent: a working binary is reused.
set -euo pipefail

VERSION=v1.24.2
MODULE=github.com/FerretDB/FerretDB
BIN_DIR="${FERRETDB_BIN_DIR:-$(go env GOPATH)/bin}"
BIN="$BIN_DIR/ferretdb"

if [ -x "$BIN" ] && "$BIN" --version 2>/dev/null | grep -q "version: $VERSION"; then
  echo "$BIN"
  exit 0
fi

command -v go >/dev/null || { echo "install-ferretdb: Go is required (https://go.dev/dl/)" >&2; exit 1; }

echo "install-ferretdb: building FerretDB $VERSION with $(go version) (about 2 minutes the first time)" >&2
src_dir=$(go mod download -json "$MODULE@$VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -n "$src_dir" ] || { echo "install-ferretdb: could not download $MODULE@$VERSION" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$src_dir" "$work/src"
chmod -R u+w "$work/src"
echo "$VERSION" > "$work/src/build/version/version.txt"
mkdir -p "$BIN_DIR"

build() { (cd "$work/src" && go build -trimpath -o "$BIN" ./cmd/ferretdb); }
# An older or newer Go may refuse FerretDB's go.mod; the toolchain it was released with comes
# through the same module proxy.
build >&2 || GOTOOLCHAIN=go1.24.3 build >&2

"$BIN" --version | grep -q "version: $VERSION"
echo "$BIN"
