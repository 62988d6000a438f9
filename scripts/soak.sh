#!/usr/bin/env bash
# Run the README's test command N times on a fresh clone and print a table of the runs.
#
#   scripts/soak.sh N            # N quiet runs
#   scripts/soak.sh N --load     # every run with one core held by a busy loop
#   scripts/soak.sh N --alternate  # every second run under that load (N=10: 5 of each)
#
# The clone is of the committed HEAD, in a temporary folder (SOAK_DIR keeps it elsewhere);
# each run's full output is kept there as run-K.log. Exits non-zero when any run failed.
# SOAK_COMMAND replaces the README's command (to check this script itself quickly).
set -euo pipefail

usage() { echo "usage: $0 N [--load | --alternate]" >&2; exit 2; }
[ $# -ge 1 ] || usage
runs=$1
mode=${2:-quiet}
case "$mode" in quiet | --load | --alternate) ;; *) usage ;; esac
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || usage

repo=$(cd "$(dirname "$0")/.." && pwd)
work=${SOAK_DIR:-$(mktemp -d -t fairstream-soak.XXXXXX)}
git clone --quiet "$repo" "$work/clone"
cd "$work/clone"
# the README's second set-up command, read from the README so that it is the one users run
command=${SOAK_COMMAND:-$(grep -m1 -E "^python3 -m venv .venv && .*pytest" README.md)}
echo "clone: $work/clone at $(git rev-parse --short HEAD)"
echo "command: $command"

loader=""
stop_load() { if [ -n "$loader" ]; then kill "$loader" 2>/dev/null || true; wait "$loader" 2>/dev/null || true; loader=""; fi; }
trap stop_load EXIT

rows=()
failures=0
for ((k = 1; k <= runs; k++)); do
  load=no
  if [ "$mode" = --load ] || { [ "$mode" = --alternate ] && (( k % 2 == 0 )); }; then
    load=yes
    python3 -c 'while True: pass' &
    loader=$!
  fi
  start=$(date +%s)
  status=0
  bash -c "$command" >"$work/run-$k.log" 2>&1 || status=$?
  seconds=$(( $(date +%s) - start ))
  stop_load
  summary=$(grep -E "^=+ .* in [0-9.]+s" "$work/run-$k.log" | tail -1 | sed -E 's/^=+ //; s/ =+$//' || true)
  count() { awk -v word="$1" '{for (i = 2; i <= NF; i++) if ($i ~ "^" word) n += $(i - 1)} END {print n + 0}' <<<"${summary//,/ }"; }
  passed=$(count passed)
  failed=$(( $(count failed) + $(count error) ))
  skipped=$(count skipped)
  result=green
  if [ "$status" -ne 0 ]; then result="RED (exit $status)"; failures=$((failures + 1)); fi
  rows+=("| $k | $load | ${passed:-0} | ${failed:-0} | ${skipped:-0} | $seconds s | $result |")
  echo "run $k/$runs (load: $load): $result in $seconds s: $summary" >&2
done

echo
echo "| run | one core busy | passed | failed | skipped | time | result |"
echo "|---:|---|---:|---:|---:|---:|---|"
printf '%s\n' "${rows[@]}"
echo
echo "$((runs - failures)) of $runs green; logs in $work"
[ "$failures" -eq 0 ]
