#!/usr/bin/env bash
# Builds the api's bundle (api/dist: main.js, migrate.js and their chunks) from api/src with
# esbuild (hack/bundle/build-api.ts), as api/Dockerfile does. `hack/build-api.sh --if-stale`
# builds only when the bundle is missing or older than a source. `node api/src/main.ts` needs no build.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

if [ "${1:-}" = "--if-stale" ] && [ -s "$ROOT/api/dist/main.js" ] \
   && [ -z "$(find "$ROOT/api/src" "$ROOT/hack/bundle" "$ROOT/package-lock.json" -newer "$ROOT/api/dist/main.js" -print -quit)" ]; then
  exit 0
fi
ensure_node_modules
say "api: bundle"
(cd "$ROOT" && node_modules/.bin/node hack/bundle/build-api.ts)
