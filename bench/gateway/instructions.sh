#!/usr/bin/env bash
# Instructions per request of the whole gateway process, counted by valgrind (callgrind), beside
# the no-op floor's: unlike requests/s or CPU time on a shared machine, the count is the same from
# run to run (±0.1%), so two builds can be compared by it.
#
#   bench/gateway/instructions.sh                      # the release build, the scale-down review
#   GATEWAY=/tmp/old/suture-gateway bench/gateway/instructions.sh   # another build
#
# The gateway runs under callgrind with instrumentation off while it loads its snapshot and warms
# up, on for DURATION of wrk over HTTPS keep-alive (CONNECTIONS connections), then off again; the
# instructions counted (user space: TLS, HTTP, reading, evaluating, answering, every thread) are
# divided by the requests wrk completed. The kernel's share (system calls, the loopback network)
# is not counted, nor wrk's.
#
# Environment: GATEWAY (the binary, default the release build), REVIEW (the AdmissionReview posted,
# compacted as kube-apiserver sends it), SNAPSHOT (default: a generated 10k-pod snapshot in WORK),
# CONNECTIONS (4), DURATION (20s), WORK (scratch directory).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE="$ROOT/bench/gateway"
GATEWAY=${GATEWAY:-"${CARGO_TARGET_DIR:-$ROOT/target}/release/suture-gateway"}
REVIEW=${REVIEW:-$ROOT/testdata/reviews/statefulset-update-scale-down.json}
CONNECTIONS=${CONNECTIONS:-4}
DURATION=${DURATION:-20s}
WORK=${WORK:-$(mktemp -d /tmp/suture-instructions.XXXXXX)}
PORT=18543 METRICS=18180

for tool in valgrind callgrind_control wrk; do
  command -v "$tool" >/dev/null || { echo "$tool is needed (apt-get install valgrind wrk)" >&2; exit 1; }
done
[ -x "$GATEWAY" ] || { echo "no gateway at $GATEWAY: cargo build --release -p suture-cmd --bin suture-gateway" >&2; exit 1; }
if [ -z "${SNAPSHOT:-}" ]; then
  SNAPSHOT="$WORK/snapshot.json"
  python3 "$HERE/gen_snapshot.py" --pods 10000 -o "$SNAPSHOT" >&2
fi
python3 -c 'import json,sys; json.dump(json.load(open(sys.argv[1])), open(sys.argv[2], "w"), separators=(",", ":"), ensure_ascii=False)' \
  "$REVIEW" "$WORK/review.json"

# count NAME ARGS...: prints "NAME requests instructions per-request"
count() {
  local name=$1 pid out requests total
  shift
  rm -f "$WORK/$name.callgrind"*
  valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$WORK/$name.callgrind" \
    "$GATEWAY" --self-signed --listen "127.0.0.1:$PORT" --metrics-listen "127.0.0.1:$METRICS" \
    --decision-log "$WORK/decisions.log" "$@" >"$WORK/$name.log" 2>&1 &
  pid=$!
  for _ in $(seq 1200); do
    curl -sf "http://127.0.0.1:$METRICS/readyz" >/dev/null && break
    kill -0 "$pid" 2>/dev/null || { tail -20 "$WORK/$name.log" >&2; exit 1; }
    sleep 0.5
  done
  REVIEW="$WORK/review.json" wrk -t1 -c"$CONNECTIONS" -d3s -s "$HERE/post.lua" "https://127.0.0.1:$PORT/validate" >/dev/null
  callgrind_control -i on "$pid" >/dev/null 2>&1
  out=$(REVIEW="$WORK/review.json" wrk -t1 -c"$CONNECTIONS" -d"$DURATION" -s "$HERE/post.lua" "https://127.0.0.1:$PORT/validate")
  callgrind_control -i off "$pid" >/dev/null 2>&1
  callgrind_control -d "$pid" >/dev/null 2>&1
  kill -INT "$pid"
  wait "$pid" 2>/dev/null || true
  requests=$(echo "$out" | awk '/requests in/ {print $1}')
  total=$(cat "$WORK/$name.callgrind"* | awk '/^totals:/ {s += $2} END {printf "%d", s}')
  echo "$name $requests $total $((total / requests))"
}

floor=$(count floor --noop)
gateway=$(count gateway --cluster "$SNAPSHOT")
echo "review: ${REVIEW#"$ROOT"/} ($(wc -c <"$WORK/review.json" | tr -d ' ') bytes, compact), $CONNECTIONS connection(s), $DURATION"
printf '%-8s %10s %16s %22s\n' server requests instructions instructions/request
for line in "$floor" "$gateway"; do
  # shellcheck disable=SC2086
  printf '%-8s %10s %16s %22s\n' $line
done
echo "$floor $gateway" | awk '{printf "gateway / floor: %.2fx the instructions per request\n", $8 / $4}'
