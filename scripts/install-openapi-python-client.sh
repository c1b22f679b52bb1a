#!/usr/bin/env bash
# Installs openapi-python-client (the Python client generator of test/e2e/generated-clients.test.ts)
# into its own virtual environment, pinned by scripts/openapi-python-client/requirements.txt; the
# generated client runs with that environment's python. `--check` installs nothing. See
# install-python-tool.sh.
exec bash "$(dirname "$0")/install-python-tool.sh" openapi-python-client "$@"
