# syntax=docker/dockerfile:1
# The server as docker-compose.yml runs it (docs/deploy.md): the compiled JS of `npm run build`
# on Node 20 with production dependencies only, configured from the environment through
# deploy/config.yaml, as the unprivileged user `node`. test/e2e/compose-deploy.test.ts reads
# this file's last stage and runs what it says without Docker.

# Build: every dependency, the compiled server in dist/, then only what production needs.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Scripts off: the package's own postinstall (PGlite's template) needs the sources and runs from
# the compiled code below; the dependencies' ones only check their prebuilt binaries.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
# The template is the pristine PGlite cluster a new embedded database is copied from
# (docs/operations.md, Start-up); read-only, so nothing at run time can change it.
RUN npm run build \
  && npm prune --omit=dev --ignore-scripts --no-audit --no-fund \
  && node dist/src/db/prepare-template.js \
  && chmod -R go-w node_modules/.cache

# Run: the agent's shell needs bubblewrap (its sandbox, with setpriv of util-linux) and the
# tools the shipped agents and skills use: gh and git for GitHub agents, python3 for the
# data-analysis skill, CA certificates for both.
FROM node:20-bookworm-slim
RUN apt-get update \
  && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends bubblewrap ca-certificates gh git python3 \
  && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production LANG=C.UTF-8 DEERFLOW_CONFIG=/app/deploy/config.yaml
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY deploy/config.yaml ./deploy/config.yaml
# data_dir of deploy/config.yaml: the only place the server writes.
RUN mkdir /data && chown node:node /data
VOLUME ["/data"]
USER node
EXPOSE 8001
# The CLI finds the server where the config puts it (server.host, server.port) and exits 0 on a 200.
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 CMD ["node", "dist/src/cli.js", "health"]
CMD ["node", "dist/src/main.js"]
