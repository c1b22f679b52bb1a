# The Deskline server as a container image (README "Run it with containers"). Two stages: the
# server and the workspace packages it is built from are installed and built in the first, and the
# second holds only what `pnpm deploy --prod` makes of the server: its compiled JavaScript and its
# production dependencies (the spec among them, as @deskline/spec), on the official Node.js 20 image.
#
#   podman build -t deskline-server .        (or docker build)
#   podman run -e MONGODB_URI='mongodb://…/?replicaSet=rs0' -e ROLE=api -p 3000:3000 deskline-server
#
# MONGODB_URI is required: the image starts no embedded database (DESKLINE_EMBEDDED_DB=off), and
# without it the server stops at once with "configuration error: MONGODB_URI is required …".
# SECRETS_ENCRYPTION_KEY (passed with -e like the rest) encrypts webhook signing secrets at rest;
# `node dist/main.js reencrypt-secrets` in the image moves them to a new key.

FROM node:20-bookworm-slim AS build
WORKDIR /src
# pnpm at the version package.json pins (packageManager), so the lockfile reads the same as in CI.
COPY package.json ./
RUN npm install --global --no-fund --no-audit \
      "pnpm@$(node -p 'require("./package.json").packageManager.split("@")[1]')"
# Dependencies before the sources, so a change of code reuses this layer: `pnpm fetch` needs only
# the lockfile and downloads every package into pnpm's store.
COPY pnpm-lock.yaml pnpm-workspace.yaml ./
RUN pnpm fetch --frozen-lockfile
# The sources of what the server is built from, nothing else: the server, the verifier it imports
# (with the build config the published packages share) and the spec package (.dockerignore leaves
# out their tests and benches, so editing those rebuilds nothing).
COPY .npmrc tsconfig.json ./
COPY spec spec
COPY packages/tsup.base.ts packages/tsup.base.ts
COPY packages/webhook-verifier packages/webhook-verifier
COPY apps/server apps/server
# Installed and built without lifecycle scripts (the root postinstall builds the SDK and CLI, which
# the image does not hold), then deployed from pnpm's store alone (`pnpm deploy:server`: the
# server's `files` and its production dependencies, the workspace's packages copied in). The
# verifier is built without its type declarations, which only its users' compilers read. The
# sources and their node_modules go in the same step, so the layer holds only /deploy: a
# rebuild after a change of code then writes and hashes that, not the build's whole tree
# (docs/development.md, "How it is built": the container image).
RUN pnpm install --frozen-lockfile --offline --ignore-scripts --filter "@deskline/server..." \
 && pnpm --filter @deskline/webhook-verifier exec tsup --no-dts \
 && pnpm --filter @deskline/server run build \
 && pnpm run deploy:server /deploy/server \
 && cd / && rm -rf /src

FROM node:20-bookworm-slim
# HOST: listen on every interface of the container. DESKLINE_EMBEDDED_DB=off: MONGODB_URI is
# required (an in-memory database would lose everything with the container). ROLE (all, api or
# worker), PORT, MONGODB_URI and the rest of docs/operations.md's settings come from the environment.
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DESKLINE_EMBEDDED_DB=off
WORKDIR /app
# A user of its own with a fixed numeric id, so orchestrators can check "not root" (runAsNonRoot).
RUN groupadd --system --gid 10001 deskline \
 && useradd --system --uid 10001 --gid deskline --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin deskline
# The deployed server package and nothing else (the server finds the spec through @deskline/spec
# in node_modules, not by a path into a checkout). Its dependencies first: they change least, so a
# change of code reuses their layer and writes only the layers after it.
COPY --from=build /deploy/server/node_modules node_modules
COPY --from=build /deploy/server/package.json ./
# The webhook console's browser files, served as they are (apps/server/console).
COPY --from=build /deploy/server/console console
COPY --from=build /deploy/server/dist dist
USER 10001:10001
EXPOSE 3000
# /readyz: the process answers and its database does. No curl in the image: Node's own fetch.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Exec form: node is PID 1 and gets SIGTERM itself, and stops gracefully (docs/operations.md).
CMD ["node", "dist/main.js"]
