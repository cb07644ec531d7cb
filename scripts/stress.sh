#!/usr/bin/env bash
# stress.sh CMD...: run CMD with two CPU-burning processes beside it, as on
# a busy CI machine or laptop, and report how long it took. The burners are
# stopped however CMD ends. Used by `make test-stress` and `.ci/run --stress`.
set -euo pipefail
burners=()
stop() { for p in "${burners[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap stop EXIT
for _ in 1 2; do
  # A shell busy loop: one core each, no I/O, nothing to install.
  bash -c 'while :; do :; done' &
  burners+=($!)
done
echo "stress: 2 CPU burners running (pids ${burners[*]}); running: $*" >&2
start=$(date +%s)
status=0
"$@" || status=$?
echo "stress: '$*' exited $status after $(( $(date +%s) - start )) s with 2 CPU burners beside it" >&2
exit $status
