#!/usr/bin/env bash
# Installs the embedded database's fallback (docs/design.md, Database): mongo-java-server's jars, fetched by
# Maven from Maven Central as listed in scripts/mongo-java-server/pom.xml, and the small launcher
# beside it compiled against them. The server starts it when no mongod can be downloaded.
#
# Needs a JDK (17+) and Maven. Idempotent: an install made from the same pom.xml and launcher is
# reused as it is. Prints the install directory (lib/ and classes/) on its last line.
#
#   --if-possible        (pnpm install's postinstall) say why, but succeed, when it cannot install:
#                        a machine that downloads mongod or uses MONGODB_URI needs no JDK
#
#   DESKLINE_CACHE_DIR   where installs live (default: ${XDG_CACHE_HOME:-~/.cache}/deskline)
set -euo pipefail

if_possible=false
[ "${1:-}" = "--if-possible" ] && if_possible=true
give_up() {
  echo "install-mongo-java-server: $*" >&2
  if $if_possible; then
    echo "install-mongo-java-server: skipped; the embedded database will need it only where no mongod can be downloaded" >&2
    exit 0
  fi
  exit 1
}

here="$(cd "$(dirname "$0")" && pwd)/mongo-java-server"
cache="${DESKLINE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/deskline}"
# The directory is named after what it is built from, so a changed pom or launcher installs anew
# and two checkouts of different versions never overwrite each other.
stamp=$(cat "$here/pom.xml" "$here"/*.java | sha256sum | cut -c1-16)
target="$cache/mongo-java-server-$stamp"

if [ -f "$target/classes/Launcher.class" ]; then
  echo "$target"
  exit 0
fi

for tool in java javac mvn; do
  command -v "$tool" >/dev/null ||
    give_up "'$tool' is required: install a JDK 17+ and Maven (Debian/Ubuntu: apt-get install openjdk-17-jdk-headless maven)"
done

echo "install-mongo-java-server: fetching mongo-java-server with Maven into $target" >&2
mkdir -p "$cache"
work=$(mktemp -d "$cache/.install-XXXXXX")
trap 'rm -rf "$work"' EXIT
mvn -q -B --no-transfer-progress -Dstyle.color=never -f "$here/pom.xml" \
  org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies \
  -DoutputDirectory="$work/lib" -DincludeScope=runtime >&2 ||
  give_up "Maven could not fetch the jars from Maven Central (see above)"
javac -nowarn -d "$work/classes" -cp "$work/lib/*" "$here"/*.java >&2 ||
  give_up "the launcher did not compile (see above)"

# Renamed into place in one step: a concurrent install either wins or finds it done.
mv -T "$work" "$target" 2>/dev/null || [ -f "$target/classes/Launcher.class" ]
trap - EXIT
rm -rf "$work"
echo "$target"
