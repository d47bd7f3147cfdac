#!/usr/bin/env bash
# relay-vm repl on a terminal, driven through tmux (send-keys, capture-pane):
# the prompt, history recall, tab completion, multi-line input, Ctrl-C
# stopping a long evaluation and a program being debugged, and the history file (libedit writes it with
# its own escapes: a space is \040).
#   repl_terminal_test.sh RELAY_VM
set -euo pipefail
relay_vm=$1
command -v tmux >/dev/null || { echo "tmux is not installed (tools/install-deps.sh)"; exit 1; }
home=$(mktemp -d)
socket="relay-vm-repl-$$"
cleanup() { tmux -L "$socket" kill-server 2>/dev/null || true; rm -rf "$home"; }
trap cleanup EXIT

tmux -L "$socket" new-session -d -x 160 -y 60 "env HOME='$home' '$relay_vm' repl; sleep 30"
screen() { tmux -L "$socket" capture-pane -p -J -S -200; }
send() { tmux -L "$socket" send-keys "$@"; }
# Waits until the screen shows `pattern` (an extended regex) `count` times.
expect() {
  local pattern=$1 count=${2:-1}
  for _ in $(seq 1 600); do
    if [ "$(screen | grep -cE -- "$pattern" || true)" -ge "$count" ]; then return 0; fi
    sleep 0.1
  done
  echo "timed out waiting for /$pattern/ x$count; the screen:"
  screen
  exit 1
}

expect '^relay> $'
send 'add(40, 2)' Enter
expect '^42$'
# History: the up arrow brings the last input back.
send Up Enter
expect '^42$' 2
# Tab completion: @len<Tab> completes the prelude's @length.
send '@len' Tab
expect 'relay> @length'
send '(Cons(1, Cons(2, Nil)))' Enter
expect '^2$'
# Multi-line input: an open bracket continues on a "......" prompt.
send 'add(1,' Enter
expect '^\.\.\.\.\.\. $'
send '2)' Enter
expect '^3$'
# Ctrl-C stops a long evaluation; the session goes on.
send 'def @spin(%n: int64) -> int64 { if (less(%n, 1i64)) { %n } else { @spin(subtract(%n, 1i64)) } }' Enter
expect '^@spin: '
send '@spin(1000000000000i64)' Enter
sleep 1
send C-c
expect 'Interrupted\.$'
send 'multiply(6, 7)' Enter
expect '^42$' 3
# Ctrl-C in the debugger (:debug) stops the program where it is.
send ':debug @spin(1000000000000i64)' Enter
expect '^Debugging'
send 'run' Enter
sleep 1
send C-c
expect '^Interrupted, @spin'
send 'quit' Enter
expect '^relay> $'
send ':quit' Enter
for _ in $(seq 1 100); do [ -s "$home/.relay_vm_history" ] && break; sleep 0.1; done
grep -q 'multiply(6,' "$home/.relay_vm_history" || { echo "no history file entry"; cat "$home/.relay_vm_history" || true; exit 1; }
echo "repl terminal test passed"
