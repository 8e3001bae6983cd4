#!/usr/bin/env bash
# Builds the studio's bundle (studio/dist) from studio/src: type-check, then esbuild.
# `hack/studio.sh --if-stale` builds only when the bundle is missing or older than a source
# (hack/up.sh, the studio tests).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

if [ "${1:-}" = "--if-stale" ] && [ -s "$ROOT/studio/dist/index.html" ] \
   && [ -z "$(find "$ROOT/studio/src" "$ROOT/studio/index.html" "$ROOT/studio/build.ts" "$ROOT/package-lock.json" -newer "$ROOT/studio/dist/index.html" -print -quit)" ]; then
  exit 0
fi
ensure_node_modules
say "studio: type-check and build"
(cd "$ROOT" && node_modules/.bin/tsc --noEmit -p studio && node_modules/.bin/node studio/build.ts)
