#!/usr/bin/env bash
# Writes tests/tools/debug/NAME.expected from each NAME.session with the
# built relay-vm (default build/release/relay-vm), from the repository's
# root. Read the differences (git diff) before committing them: the
# transcripts are the debugger's specification.
set -euo pipefail
cd "$(dirname "$0")/../../.."
relay_vm=${1:-build/release/relay-vm}
for session in tests/tools/debug/*.session; do
  args=$(head -1 "$session" | sed 's/^# relay-vm debug //')
  # shellcheck disable=SC2086
  "$relay_vm" debug $args < "$session" > "${session%.session}.expected" 2>&1 || true
done
