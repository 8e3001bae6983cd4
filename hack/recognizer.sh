#!/usr/bin/env bash
# Makes (or checks) the recognizer's virtual environment, .venv, from recognizer/requirements.lock:
# faster-whisper and the Whisper weights, every file checked against its hash. hack/up.sh and
# hack/test.sh run this themselves.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
ensure_recognizer
