# Starting the benchmark servers: sourced by run.sh and stages.sh, which set WORK, BIN and PIDS
# (and kill PIDS and remove $WORK/*-suture-gateway on exit).
#
# start NAME PORT METRICS ARGS... : starts a gateway, logs in $WORK/NAME.log, pid in $WORK/NAME.pid.
# Each server runs from its own copy of the binary: processes running one file share its cached
# code, and the floor's requests would keep the gateway's TLS and HTTP code warm (docs/benchmarks.md,
# "Latency inside kube-apiserver").
start() {
  local name=$1 port=$2 metrics=$3
  shift 3
  cp "$BIN" "$WORK/$name-suture-gateway"
  "$WORK/$name-suture-gateway" --self-signed --listen "127.0.0.1:$port" --metrics-listen "127.0.0.1:$metrics" "$@" \
    >"$WORK/$name.log" 2>&1 &
  echo $! >"$WORK/$name.pid"
  PIDS+=("$!")
}

# wait_ready NAME METRICS TIMEOUT_SECONDS
wait_ready() {
  local name=$1 metrics=$2 timeout=$3 waited=0
  until curl -sf "http://127.0.0.1:$metrics/readyz" >/dev/null; do
    if ! kill -0 "$(cat "$WORK/$name.pid")" 2>/dev/null; then
      echo "$name exited:" >&2; tail -20 "$WORK/$name.log" >&2; exit 1
    fi
    if [ "$waited" -ge $((timeout * 10)) ]; then
      echo "$name not ready after ${timeout}s:" >&2; tail -20 "$WORK/$name.log" >&2; exit 1
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
}
