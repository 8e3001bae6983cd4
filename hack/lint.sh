#!/usr/bin/env bash
# Type-aware lint (eslint.config.js: floating and misused promises, exhaustive switches, ...)
# over the files tsconfig.json covers. Passes only with no error and no warning.
# Arguments go to eslint: files to lint instead of all, --fix, ...
set -euo pipefail
source "$(dirname "$0")/lib.sh"

ensure_node_modules
say "lint: eslint (type-aware, about a minute)"
eslint --max-warnings 0 "$@"
