#!/usr/bin/env bash
# tui-smoke.sh: run abctl's TUI under tmux at 80x24, 200x50 and 60x20, send keys,
# capture the pane and fail when expected content is missing. It builds
# abctl into a temporary directory first. Needs tmux.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v tmux >/dev/null || { echo "tui-smoke: tmux not found (apt-get install tmux)" >&2; exit 1; }

tmp=$(mktemp -d)
sock="abctl-smoke-$$"
cleanup() {
  tmux -L "$sock" kill-server 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

go build -o "$tmp/abctl" ./cmd/abctl

fail=0
# expect SESSION WHAT TEXT: wait for TEXT on the pane; 30 s is only a hang
# guard (the check ends as soon as the text shows, however busy the machine).
expect() {
  local s=$1 what=$2 text=$3 pane
  for _ in $(seq 300); do
    pane=$(tmux -L "$sock" capture-pane -p -t "$s")
    if grep -qF -- "$text" <<<"$pane"; then
      echo "ok   $s: $what"
      return 0
    fi
    sleep 0.1
  done
  echo "FAIL $s: $what: no \"$text\" on screen:" >&2
  echo "$pane" >&2
  fail=1
}

keys() { tmux -L "$sock" send-keys -t "$1" "${@:2}"; sleep 0.2; }

for size in 80x24 200x50; do
  w=${size%x*} h=${size#*x}
  s="s$size"
  tmux -L "$sock" new-session -d -s "$s" -x "$w" -y "$h" \
    "env TERM=xterm-256color NO_COLOR=1 $tmp/abctl; echo abctl-exited; sleep 5"
  expect "$s" "opens on the catalog" "guardrail"
  expect "$s" "status bar counts" "plugins"
  keys "$s" /
  keys "$s" p i i
  keys "$s" Enter
  expect "$s" "filter narrows the list" "filter: pii"
  keys "$s" Enter
  expect "$s" "detail pane" "writes response body"
  keys "$s" Escape
  keys "$s" 2
  expect "$s" "chain tab" "inbound"
  keys "$s" 3
  expect "$s" "fixture list" "chat-stream-reject"
  keys "$s" j Enter
  expect "$s" "dry-run ran" "11 calls"
  keys "$s" x
  expect "$s" "next reject" "blocked by guardrail"
  keys "$s" G
  expect "$s" "last step" "step 11/11"
  keys "$s" "?"
  expect "$s" "help screen" "Everywhere"
  # At 80x24 the help scrolls; G shows its end (the Trace keys, Badges).
  keys "$s" G
  expect "$s" "help scrolls to the end" "Badges"
  keys "$s" Escape
  keys "$s" q
  expect "$s" "q quits" "abctl-exited"
done

# The smallest size the TUI supports: help opens, scrolls to its end and
# closes; no help line is cut off (an ellipsis would mean truncation).
s="s60x20"
tmux -L "$sock" new-session -d -s "$s" -x 60 -y 20 \
  "env TERM=xterm-256color NO_COLOR=1 $tmp/abctl; echo abctl-exited; sleep 5"
expect "$s" "opens on the catalog" "guardrail"
keys "$s" "?"
expect "$s" "help screen" "Everywhere"
# (The status bar, with its │ separators, may shorten the chain's path.)
if tmux -L "$sock" capture-pane -p -t "$s" | grep -v "│" | grep -q "…"; then
  echo "FAIL $s: help is truncated:" >&2
  tmux -L "$sock" capture-pane -p -t "$s" >&2
  fail=1
fi
keys "$s" G
expect "$s" "help scrolls to the end" "Badges"
keys "$s" Escape
keys "$s" q
expect "$s" "q quits" "abctl-exited"

if [ "$fail" -ne 0 ]; then
  echo "tui-smoke: FAILED" >&2
  exit 1
fi
echo "tui-smoke: ok"
