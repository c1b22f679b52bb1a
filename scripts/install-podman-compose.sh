#!/usr/bin/env bash
# Installs podman-compose (which reads compose.yaml for podman; test/e2e/container-image.test.ts
# runs its `config`, which Debian 12's podman-compose 1.0.3 lacks) into its own virtual
# environment, pinned by scripts/podman-compose/requirements.txt. `--check` installs nothing. See
# install-python-tool.sh.
exec bash "$(dirname "$0")/install-python-tool.sh" podman-compose "$@"
