#!/usr/bin/env bash
# Resource limits under attack: the release gateway, with its default limits, on loopback, while
# hostile clients take turns (gateway/examples/attack.rs):
#
#   baseline    the prober alone
#   slowloris   SLOW connections held open: a third never start their TLS handshake, a third send
#               their headers a byte every 500 ms, a third trickle a body a byte every 500 ms;
#               each reopened as soon as the gateway closes it
#   bodies      FLOODERS clients posting back to back: half maximum-size reviews (--max-body-bytes,
#               6 MiB), half bodies 1 MiB over it
#   exhausting  FLOODERS clients posting a ConfigMap creation that two SafetyPolicies with
#               budget-exhausting expressions judge (testdata/attack/exhausting-policies.yaml:
#               nested comprehensions, and lists of strings built from lists)
#   all         the three at once
#
# All along a prober posts a recorded review the built-in pack judges against a PODS-pod model
# (a StatefulSet scale-down, denied) every 50 ms over a kept-alive connection, as kube-apiserver
# does, and every tenth over a new connection. The report (OUT, default bench/attack/results.md)
# gives per phase the prober's latency and failures, what the attackers got, and the gateway's
# VmRSS.
#
#   bench/attack/run.sh
#
# Environment: SECONDS_PER_PHASE (20), SLOW (600), FLOODERS (16), PODS (10000), GATEWAY_ARGS
# (more flags for the gateway), WORK (scratch directory), OUT.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE="$ROOT/bench/attack"
SECONDS_PER_PHASE=${SECONDS_PER_PHASE:-20}
SLOW=${SLOW:-600}
FLOODERS=${FLOODERS:-16}
PODS=${PODS:-10000}
OUT=${OUT:-$HERE/results.md}
WORK=${WORK:-$(mktemp -d /tmp/suture-attack.XXXXXX)}
PORT=18543 METRICS=18180
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}/release"
PID=

log() { printf '==> %s\n' "$*" >&2; }
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; wait 2>/dev/null || true; }
trap cleanup EXIT

# The slow clients and the gateway each hold a descriptor per connection.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

log "building the release gateway and the attack driver"
(cd "$ROOT" && cargo build --release --quiet --bin suture-gateway --example attack)

log "generating a ${PODS}-pod snapshot, a CA and a serving certificate in $WORK"
python3 "$ROOT/bench/gateway/gen_snapshot.py" --pods "$PODS" -o "$WORK/snapshot.json"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=attack-ca \
  -addext basicConstraints=critical,CA:TRUE -keyout "$WORK/ca.key" -out "$WORK/ca.crt" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=127.0.0.1 \
  -keyout "$WORK/tls.key" -out "$WORK/tls.csr" 2>/dev/null
openssl x509 -req -in "$WORK/tls.csr" -CA "$WORK/ca.crt" -CAkey "$WORK/ca.key" -CAcreateserial -days 1 \
  -extfile <(printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n') \
  -out "$WORK/tls.crt" 2>/dev/null
python3 -c 'import json,sys; json.dump(json.load(open(sys.argv[1])), open(sys.argv[2], "w"), separators=(",", ":"))' \
  "$ROOT/testdata/reviews/statefulset-update-scale-down.json" "$WORK/probe.json"

log "starting the gateway (built-in pack + exhausting policies, default limits)"
# shellcheck disable=SC2086 # GATEWAY_ARGS is a list of flags
"$TARGET/suture-gateway" --tls-cert "$WORK/tls.crt" --tls-key "$WORK/tls.key" \
  --listen "127.0.0.1:$PORT" --metrics-listen "127.0.0.1:$METRICS" --cluster "$WORK/snapshot.json" \
  -f "$ROOT/testdata/attack/exhausting-policies.yaml" --decision-log off ${GATEWAY_ARGS:-} \
  >"$WORK/gateway.log" 2>&1 &
PID=$!
for _ in $(seq 600); do
  curl -sf "http://127.0.0.1:$METRICS/readyz" >/dev/null && break
  kill -0 "$PID" 2>/dev/null || { tail -20 "$WORK/gateway.log" >&2; exit 1; }
  sleep 0.1
done
start_rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$PID/status")

log "attacking: $SECONDS_PER_PHASE s per phase"
"$TARGET/examples/attack" --url "https://127.0.0.1:$PORT/validate" --ca "$WORK/ca.crt" \
  --review "$WORK/probe.json" --exhausting "$ROOT/testdata/attack/configmap-create-review.json" \
  --pid "$PID" --seconds "$SECONDS_PER_PHASE" --slow "$SLOW" --flooders "$FLOODERS" >"$WORK/table.md"
kill -0 "$PID" 2>/dev/null || { echo "the gateway died:" >&2; tail -20 "$WORK/gateway.log" >&2; exit 1; }
errors=$(curl -s "http://127.0.0.1:$METRICS/metrics" | grep '^suture_gateway_evaluation_errors_total' | tr '\n' ' ')

{
  echo "# Resource limits under attack"
  echo
  echo "bench/attack/run.sh on $(date -u +%F), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)):"
  echo "release gateway with its default limits (--max-body-bytes 6 MiB, --max-buffered-bytes 128 MiB,"
  echo "--body-timeout 10s, --max-connections 1024, --max-concurrency 64, --eval-timeout 2s), the"
  echo "built-in pack and testdata/attack/exhausting-policies.yaml, a ${PODS}-pod model; ${SECONDS_PER_PHASE} s per"
  echo "phase, ${SLOW} slow connections, ${FLOODERS} flooders per kind. Gateway VmRSS when ready: $((start_rss / 1024)) MiB."
  echo
  cat "$WORK/table.md"
  echo
  echo "Gateway evaluation errors at the end: ${errors:-none}"
} >"$OUT"
cat "$OUT"
