#!/usr/bin/env bash
# Where a sparse judged request's time goes inside the gateway, stage by stage.
#
#   bench/gateway/stages.sh [REVIEW]     (default: the database scene's Pod DELETE, as a dry run)
#
# Builds the release gateway, runs it with --stage-timings on a snapshot (SNAPSHOT, default
# testdata/clusters/database) beside a --noop floor, each from its own copy of the binary, posts
# REVIEW to both alternately every GAP seconds (default 0.025, as kube-apiserver's calls to one
# gateway come in bench/apiserver) with paced.py, PAIRS times (default 400), and prints the median
# of each stage from the decision log (stages.py). Cold, sparse requests spend their time in cache
# misses spread over every stage: this times them where they run. GATEWAY=<path> times that
# build (both servers) instead of building this tree's.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
SNAPSHOT=${SNAPSHOT:-$ROOT/testdata/clusters/database}
GAP=${GAP:-0.025}
PAIRS=${PAIRS:-400}
WORK=$(mktemp -d /tmp/suture-stages.XXXXXX)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -f "$WORK"/*-suture-gateway
}
trap cleanup EXIT

if [[ $# -ge 1 ]]; then
  REVIEW=$1
else
  REVIEW="$WORK/review.json"
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); r["request"]["dryRun"]=True; json.dump(r, open(sys.argv[2], "w"))' \
    "$ROOT/testdata/reviews/pod-delete-pg-main-0.json" "$REVIEW"
fi

if [[ -n "${GATEWAY:-}" ]]; then
  BIN=$GATEWAY  # a given build, e.g. scripts/pgo-build.sh's
else
  (cd "$ROOT" && cargo build --release --quiet --bin suture-gateway)
  BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/suture-gateway"
fi

# start and wait_ready: the servers, each from its own copy of the binary.
# shellcheck source=bench/gateway/servers.sh
source "$HERE/servers.sh"

start gateway 18543 18553 --cluster "$SNAPSHOT" --decision-log "$WORK/decisions.log" --stage-timings
start floor 18544 18554 --noop
wait_ready gateway 18553 60
wait_ready floor 18554 30
python3 "$HERE/paced.py" --gateway 18543 --floor 18544 --review "$REVIEW" --gaps "$GAP" --pairs "$PAIRS"
echo
kill "${PIDS[0]}"  # its decision log is written at shutdown
wait "${PIDS[0]}" 2>/dev/null || true
python3 "$HERE/stages.py" "$WORK/decisions.log"
