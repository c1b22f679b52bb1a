#!/usr/bin/env bash
# Installs openapi-generator (the client generator of test/e2e/openapi-generator.test.ts; its PyPI
# wrapper brings the jar, Java 11+ runs it) into its own virtual environment, with the packages the
# Python client it generates imports, pinned by scripts/openapi-generator-cli/requirements.txt; the
# generated client runs with that environment's python. `--check` installs nothing. See
# install-python-tool.sh.
exec bash "$(dirname "$0")/install-python-tool.sh" openapi-generator-cli "$@"
