#!/usr/bin/env bash
# Load benchmark of suture-gateway, side by side with its no-op floor, in one run.
#
#   bench/gateway/run.sh            # writes bench/gateway/results.md
#
# 1. Builds the release binaries and generates a 10k-pod snapshot (gen_snapshot.py).
# 2. Starts `suture-gateway --self-signed --cluster SNAPSHOT` (offline model, built-in pack) and
#    `suture-gateway --noop --self-signed` (the same TLS/HTTP stack answering "allowed" without
#    evaluating: the physical floor of this machine), both on loopback.
# 3. Drives each over HTTPS keep-alive with wrk, POSTing a recorded AdmissionReview the pack
#    judges and whose impact the model computes (a StatefulSet scale-down, denied), at 64, 4 and 1
#    concurrent connections, alternating gateway and floor so both see the same machine noise.
# 4. Measures the resident memory (VmRSS) of a gateway serving a 150k-pod snapshot.
#
# The review is posted as compact JSON, as kube-apiserver sends it (Go's encoding/json writes no
# whitespace); the recorded files are pretty-printed for reading.
#
# Environment: DURATION (per wrk run, default 15s), PODS (10000), BIG_PODS (150000; 0 skips the
# memory measurement), REVIEW (the AdmissionReview posted), COMPACT (1; 0 posts REVIEW's bytes
# as they are), WORK (scratch directory), OUT (the report, default bench/gateway/results.md),
# CONNECTIONS ("64 4 1"), GATEWAY_ARGS (more flags for the judging gateway, e.g. `--params FILE`
# to disable a policy and measure what it costs), PACED_GAPS (e.g. "0 0.005 0.025": also time
# requests sent one at a time with these gaps in seconds, paced.py; PACED_PAIRS per gap, 400).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE="$ROOT/bench/gateway"
DURATION=${DURATION:-15s}
PODS=${PODS:-10000}
BIG_PODS=${BIG_PODS:-150000}
REVIEW=${REVIEW:-$ROOT/testdata/reviews/statefulset-update-scale-down.json}
CONNECTIONS=${CONNECTIONS:-"64 4 1"}
COMPACT=${COMPACT:-1}
OUT=${OUT:-$HERE/results.md}
WORK=${WORK:-$(mktemp -d /tmp/suture-bench.XXXXXX)}
mkdir -p "$WORK"
GATEWAY_PORT=18443 GATEWAY_METRICS=18080 NOOP_PORT=18444 NOOP_METRICS=18081
BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/suture-gateway"
PIDS=()

log() { printf '==> %s\n' "$*" >&2; }

cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -f "$WORK"/*-suture-gateway
}
trap cleanup EXIT

if ! command -v wrk >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    log "installing wrk (apt-get install wrk)"
    apt-get install -y wrk >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; }
  else
    echo "wrk is needed: install it with 'sudo apt-get install wrk' (Debian/Ubuntu) or 'brew install wrk'" >&2
    exit 1
  fi
fi

log "building release binaries"
(cd "$ROOT" && cargo build --release --quiet --bin suture-gateway --bin kubectl-suture)

log "generating a ${PODS}-pod snapshot in $WORK"
python3 "$HERE/gen_snapshot.py" --pods "$PODS" -o "$WORK/snapshot.json"

# start and wait_ready: the servers, each from its own copy of the binary.
# shellcheck source=bench/gateway/servers.sh
source "$HERE/servers.sh"

# model_counts METRICS: "pods objects" as the gateway's /metrics reports its model
model_counts() {
  curl -s "http://127.0.0.1:$1/metrics" | awk '
    /^suture_gateway_model_objects[{]kind="Pod"[}]/ { pods = $2 }
    /^suture_gateway_model_objects[{]/ { total += $2 }
    END { printf "%d %d\n", pods, total }'
}

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$(cat "$WORK/$1.pid")/status"; }
# cpu_ticks NAME: user + system CPU time the server has used so far, in clock ticks
cpu_ticks() { awk '{print $14 + $15}' "/proc/$(cat "$WORK/$1.pid")/stat"; }
hwm_kib() { awk '/^VmHWM:/ {print $2}' "/proc/$(cat "$WORK/$1.pid")/status"; }

RECORDED=$REVIEW
if [ "$COMPACT" = 1 ]; then
  REVIEW="$WORK/review.json"
  python3 -c 'import json,sys; json.dump(json.load(open(sys.argv[1])), open(sys.argv[2], "w"), separators=(",", ":"), ensure_ascii=False)' \
    "$RECORDED" "$REVIEW"
fi
body="$(wc -c <"$REVIEW" | tr -d ' ') bytes"
[ "$COMPACT" = 1 ] && body="$body, compact"

log "starting the gateway (offline model, built-in pack) and the no-op floor"
# shellcheck disable=SC2086 # GATEWAY_ARGS is a list of flags
start gateway "$GATEWAY_PORT" "$GATEWAY_METRICS" --cluster "$WORK/snapshot.json" --decision-log "$WORK/decisions.log" ${GATEWAY_ARGS:-}
start noop "$NOOP_PORT" "$NOOP_METRICS" --noop
wait_ready gateway "$GATEWAY_METRICS" 120
wait_ready noop "$NOOP_METRICS" 30
model_10k=$(model_counts "$GATEWAY_METRICS")
log "model: pods, objects = $model_10k"

verdict=$(curl -sk -H 'Content-Type: application/json' --data-binary "@$REVIEW" "https://127.0.0.1:$GATEWAY_PORT/validate")
floor=$(curl -sk -H 'Content-Type: application/json' --data-binary "@$REVIEW" "https://127.0.0.1:$NOOP_PORT/validate")
allowed=$(python3 -c 'import json,sys; r=json.loads(sys.argv[1])["response"]; print(r["allowed"], r.get("status",{}).get("code",""))' "$verdict")
python3 -c 'import json,sys; assert json.loads(sys.argv[1])["response"]["allowed"] is True' "$floor"
log "gateway answers: allowed, code = $allowed"

# run NAME PORT CONNECTIONS: wrk over keep-alive HTTPS; prints "rps p50_ms p99_ms errors cpu_us",
# cpu_us being the server's CPU time (user + system, all threads) per request served
run() {
  local name=$1 port=$2 conns=$3 threads=2 before after
  [ "$conns" -lt 2 ] && threads=1
  before=$(cpu_ticks "$name")
  REVIEW="$REVIEW" wrk -t"$threads" -c"$conns" -d"$DURATION" --latency -s "$HERE/post.lua" \
    "https://127.0.0.1:$port/validate" >"$WORK/wrk-$name-$conns.txt"
  after=$(cpu_ticks "$name")
  python3 "$HERE/parse_wrk.py" "$WORK/wrk-$name-$conns.txt" --cpu-seconds \
    "$(python3 -c "import sys; print((int(sys.argv[2]) - int(sys.argv[1])) / int(sys.argv[3]))" "$before" "$after" "$(getconf CLK_TCK)")"
}

declare -A RESULT
for conns in $CONNECTIONS; do
  for name in noop gateway; do
    port=$NOOP_PORT; [ "$name" = gateway ] && port=$GATEWAY_PORT
    log "wrk: $name, $conns connection(s), $DURATION"
    RESULT[$name-$conns]=$(run "$name" "$port" "$conns")
    log "  requests/s p50(ms) p99(ms) errors server-CPU(µs/request): ${RESULT[$name-$conns]}"
  done
done
paced=""
if [ -n "${PACED_GAPS:-}" ]; then
  log "paced: one request at a time, gaps of $PACED_GAPS s"
  # shellcheck disable=SC2086 # PACED_GAPS is a list of numbers
  paced=$(python3 "$HERE/paced.py" --gateway "$GATEWAY_PORT" --floor "$NOOP_PORT" --review "$REVIEW" \
    --gaps $PACED_GAPS --pairs "${PACED_PAIRS:-400}")
fi
rss_10k=$(rss_kib gateway)
kill "$(cat "$WORK/gateway.pid")" "$(cat "$WORK/noop.pid")" 2>/dev/null || true
wait 2>/dev/null || true
PIDS=()

rss_big="" hwm_big="" load_big="" p50_big="" model_big=""
if [ "$BIG_PODS" -gt 0 ]; then
  log "generating a ${BIG_PODS}-pod snapshot (10k pods per file)"
  python3 "$HERE/gen_snapshot.py" --pods "$BIG_PODS" --split 10000 -o "$WORK/big"
  log "starting the gateway on it"
  began=$(date +%s.%N)
  start big "$GATEWAY_PORT" "$GATEWAY_METRICS" --cluster "$WORK/big" --decision-log off
  wait_ready big "$GATEWAY_METRICS" 900
  model_big=$(model_counts "$GATEWAY_METRICS")
  log "model: pods, objects = $model_big"
  load_big=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$began" "$(date +%s.%N)")
  sleep 3 # let the allocator return the loader's transient memory
  rss_big=$(rss_kib big) hwm_big=$(hwm_kib big)
  log "150k-pod model: VmRSS ${rss_big} KiB (peak ${hwm_big} KiB), ready in ${load_big}s"
  p50_big=$(DURATION=5s run big "$GATEWAY_PORT" 1)
  rss_big_after=$(rss_kib big)
  kill "$(cat "$WORK/big.pid")" 2>/dev/null || true
  wait 2>/dev/null || true
  PIDS=()
fi

log "writing $OUT"
python3 "$HERE/report.py" \
  --duration "$DURATION" --pods "$PODS" --review "${RECORDED#"$ROOT"/}" --body "$body" --verdict "$allowed" \
  --connections "$CONNECTIONS" --rss-10k "$rss_10k" --model-10k "$model_10k" --model-big "$model_big" \
  --big-pods "$BIG_PODS" --rss-big "$rss_big" --hwm-big "$hwm_big" --rss-big-after "${rss_big_after:-}" \
  --load-big "$load_big" --big-latency "$p50_big" \
  $(for key in "${!RESULT[@]}"; do printf -- '--result %s=%s ' "$key" "${RESULT[$key]// /,}"; done) \
  >"$OUT"
if [ -n "$paced" ]; then
  {
    printf '\n## One request at a time\n\n'
    printf 'bench/gateway/paced.py: the same review posted to the gateway and the floor alternately, each server seeing one request per gap over its kept-alive connection (%s pairs per gap). Round trips at the client, in microseconds.\n\n' "${PACED_PAIRS:-400}"
    printf '%s\n' "$paced"
  } >>"$OUT"
fi
cat "$OUT"
