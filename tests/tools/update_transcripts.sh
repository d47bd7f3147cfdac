#!/usr/bin/env bash
# Writes tests/tools/{debug,repl}/NAME.expected from each NAME.session with
# the built relay-vm (default build/release/relay-vm), from the repository's
# root, as tests/tools/transcript_test.cc runs them. Read the differences
# (git diff) before committing them: the transcripts are the debugger's and
# the REPL's specification.
set -euo pipefail
cd "$(dirname "$0")/../.."
relay_vm=${1:-build/release/relay-vm}
for session in tests/tools/debug/*.session tests/tools/repl/*.session; do
  kind=$(basename "$(dirname "$session")")
  args=$(head -1 "$session" | sed -E "s@^(#|//) relay-vm $kind ?@@")
  # shellcheck disable=SC2086
  "$relay_vm" "$kind" $args < "$session" > "${session%.session}.expected" 2>&1 || true
done
