#!/usr/bin/env bash
# Runs every test against real PostgreSQL, Redis, S3 (embedded), ffmpeg, Whisper (faster-whisper
# behind recognizer/server), SMTP and OIDC servers on loopback. Installs what is
# missing first. Ends with `N passed, N failed`.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

export TEST_POSTGRES_URL="${TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
export DATABASE_URL="$TEST_POSTGRES_URL"
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379/0}"

ensure_node_modules
# The lint first: a finding fails the run before any test starts (LINT=0 skips it, for a quick local run).
if [ "${LINT:-1}" != 0 ]; then
  bash hack/lint.sh || die "lint failed: fix the findings above (bash hack/lint.sh, or npm run lint)"
fi
# flite speaks the test phrases the recognizer hears (hack/fixtures/speech.ts); chromium runs the browser tests (test/support/browser.ts); nginx is the reverse proxy of test/support/nginx.ts.
ensure_commands ffmpeg:ffmpeg ffprobe:ffmpeg espeak-ng:espeak-ng sox:sox soxi:sox flite:flite redis-server:redis-server melt:melt xmllint:libxml2-utils chromium:chromium nginx:nginx "${RENDER_FONTS[@]}" "${SPEECH_CORPUS[@]}"
ensure_recognizer
ensure_otio
ensure_kubernetes
ensure_postgres
ensure_redis
trap 'stop_started_services' EXIT

# No arguments: every test, the files shared among TEST_JOBS mocha workers (default 2), each
# worker with a database, Redis prefix, S3 and Whisper server of its own (test/support/global.ts).
# Arguments: those files or globs only (and mocha options), in one process unless --parallel is given.
[ $# -gt 0 ] || set -- --parallel --jobs "${TEST_JOBS:-2}" "test/**/*.test.ts"
mocha "$@"
