#!/usr/bin/env bash
# Start-up time of the gateway's image, against the same binary started on the host in the same
# run (the baseline): from the start command to the first 200 from /healthz and from /readyz,
# RUNS times each, alternating, with the install's security flags (user 65532, read-only root,
# no capabilities) on the offline database scene. Prints each run and the medians.
#
# Usage: bench/image/startup.sh --image REF --binary PATH [--runs N]
#   --image REF    an image built by scripts/image.sh (in the local containers storage)
#   --binary PATH  the suture-gateway binary the image holds (the baseline)
#   --runs N       runs of each (default 10)
# Needs podman, runc, curl, python3 and openssl.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
image=""
binary=""
runs=10
while [ $# -gt 0 ]; do
  case "$1" in
    --image) image="$2"; shift 2 ;;
    --binary) binary=$(realpath "$2"); shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "startup.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -n "$image" ] && [ -n "$binary" ] || { echo "startup.sh: --image and --binary are required" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/suture-startup.XXXXXX")
name="suture-startup-$$"
pid=""
cleanup() {
  podman --runtime runc rm -f "$name" >/dev/null 2>&1 || true
  [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
chmod 0755 "$work"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=localhost \
  -keyout "$work/tls.key" -out "$work/tls.crt" 2>/dev/null
chmod 0644 "$work/tls.key"
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
now_ms() { date +%s%3N; }
# Milliseconds from $1 until PATH on the metrics port answers 200.
until_ok() {
  local start=$1 url=$2
  until curl -sf -o /dev/null "$url"; do sleep 0.005; done
  echo $(( $(now_ms) - start ))
}
args=(--eval-timeout=4s --shutdown-grace=25s --max-model-age=60s --decision-log=stdout)

container_healthy=(); container_ready=(); host_healthy=(); host_ready=()
for i in $(seq "$runs"); do
  https=$(free_port); metrics=$(free_port)
  start=$(now_ms)
  podman --runtime runc run -d --name "$name" --ulimit nofile=20000:20000 --ulimit nproc=32768:32768 \
    --user 65532:65532 --read-only --read-only-tmpfs=false --cap-drop=all --security-opt=no-new-privileges \
    -p "127.0.0.1:$https:8443" -p "127.0.0.1:$metrics:8080" \
    -v "$work:/etc/suture/tls:ro" -v "$HERE/testdata/clusters/database:/cluster:ro" "$image" \
    --listen=0.0.0.0:8443 --metrics-listen=0.0.0.0:8080 \
    --tls-cert=/etc/suture/tls/tls.crt --tls-key=/etc/suture/tls/tls.key "${args[@]}" --cluster=/cluster >/dev/null
  container_healthy+=("$(until_ok "$start" "http://127.0.0.1:$metrics/healthz")")
  container_ready+=("$(until_ok "$start" "http://127.0.0.1:$metrics/readyz")")
  podman --runtime runc rm -f "$name" >/dev/null

  https=$(free_port); metrics=$(free_port)
  start=$(now_ms)
  "$binary" --listen="127.0.0.1:$https" --metrics-listen="127.0.0.1:$metrics" \
    --tls-cert="$work/tls.crt" --tls-key="$work/tls.key" "${args[@]}" \
    --cluster="$HERE/testdata/clusters/database" >/dev/null 2>&1 &
  pid=$!
  host_healthy+=("$(until_ok "$start" "http://127.0.0.1:$metrics/healthz")")
  host_ready+=("$(until_ok "$start" "http://127.0.0.1:$metrics/readyz")")
  kill -TERM "$pid"; wait "$pid" || true; pid=""
  echo "run $i: container healthy ${container_healthy[-1]} ms, ready ${container_ready[-1]} ms;" \
    "host healthy ${host_healthy[-1]} ms, ready ${host_ready[-1]} ms" >&2
done
median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
echo "medians of $runs: container healthy $(median "${container_healthy[@]}") ms, ready $(median "${container_ready[@]}") ms;" \
  "host healthy $(median "${host_healthy[@]}") ms, ready $(median "${host_ready[@]}") ms"
