#!/usr/bin/env bash
# Installs the recorded human speech bench/analysis-robustness assembles its talks from
# (Debian packages): Allison Smith's Asterisk prompts (16 kHz G.722, CC-BY-SA-3.0) and their
# transcripts, pocketsphinx's test recordings with theirs (a LibriVox reader, the "cards"
# speaker, two command phrases; BSD-2 / public domain), and for the detector-only talks and
# the babble bed the Asterisk voices of June Wallack (Canadian French, CC-BY-SA-3.0), Carlo
# Flora (Italian, CC-BY-3.0) and the Russian IVR voice (CC-BY-3.0); and the offline
# recognizer the end-to-end part runs (faster-whisper, hack/recognizer.sh).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

ensure_commands ffmpeg:ffmpeg "${SPEECH_CORPUS[@]}"
ensure_recognizer
