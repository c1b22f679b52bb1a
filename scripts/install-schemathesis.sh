#!/usr/bin/env bash
# Installs Schemathesis (the spec-driven API fuzzer of apps/server/test/schemathesis.test.ts) into
# its own virtual environment, pinned by scripts/schemathesis/requirements.txt. `--check` installs
# nothing. See install-python-tool.sh.
exec bash "$(dirname "$0")/install-python-tool.sh" schemathesis "$@"
