#!/usr/bin/env bash
# Installs the recorded human speech bench/analysis-robustness assembles its talks from
# (Debian packages, each recording with its text): Allison Smith's Asterisk prompts
# (16 kHz G.722, CC-BY-SA-3.0) and their transcripts, and pocketsphinx's test recordings
# (a LibriVox reader, the "cards" speaker, two command phrases; BSD-2 / public domain).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

ensure_commands ffmpeg:ffmpeg "${SPEECH_CORPUS[@]}"
