#!/usr/bin/env bash
# Builds suture-gateway with profile-guided optimization (PGO), as releases ship it.
#
# A judged admission request is sparse: kube-apiserver calls the gateway a few times a second,
# and between two calls the rest of the machine evicts its code from the caches, so a request's
# time is mostly the code and data lines it fetches (docs/benchmarks.md, "Latency inside kube-apiserver").
# With a profile of real requests, LLVM lays the judged path's hot blocks out together and moves
# the cold ones (errors, rare branches) away: the lines one request fetches lie together, and a
# judged request took 19-25 us less inside the gateway (docs/performance.md, "Profile-guided release build").
#
#   1. builds an instrumented gateway (-Cprofile-generate) into $TARGET/pgo/generate;
#   2. trains it: for each scene under testdata/clusters (all but bad/), starts it offline on that
#      snapshot with the built-in pack and a decision log, posts every review under
#      testdata/reviews as sent and as a dry run (scripts/pgo-train.py checks each answer),
#      reads /metrics, and stops it (the profile is written at exit);
#   3. merges the profile with llvm-profdata and builds the optimized gateway (-Cprofile-use)
#      into $TARGET/pgo/use, copied to --out.
#
# What training does not run (the live mode's watches, reloads, the no-op mode) is optimized as
# cold code: smaller, not slower to be correct, but not laid out for speed.
#
# Usage: scripts/pgo-build.sh [--out PATH] [--rounds N] [--tree DIR] [--profile-out PATH]
#   --out PATH   where the optimized binary goes (default: $TARGET/pgo/suture-gateway)
#   --profile-out PATH  also keep the merged profile (bench/gateway/footprint.sh counts a
#                build made with it: PROFILE=PATH)
#   --rounds N   times the training posts each body (default 40)
#   --tree DIR   the source tree to build (default: this script's; bench/apiserver/run.sh builds a
#                baseline commit's worktree with it); the training data is always this script's
#
# Needs python3, curl, and rustc's own llvm-profdata: `rustup component add llvm-tools`, or
# LLVM_PROFDATA=<path> to one of the same LLVM version (`rustc -vV` names it). CARGO_TARGET_DIR
# (default DIR/target) and RUSTFLAGS (the profile flags are added to it) are honoured.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tree=$HERE
out=""
rounds=40
profile_out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --tree) tree=$(cd "$2" && pwd); shift 2 ;;
    --profile-out) profile_out=$(realpath -m "$2"); shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "pgo-build.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

TARGET=$(realpath -m "${CARGO_TARGET_DIR:-$tree/target}")
out=$(realpath -m "${out:-$TARGET/pgo/suture-gateway}")
for tool in python3 curl; do
  command -v "$tool" >/dev/null || { echo "pgo-build.sh: $tool is needed" >&2; exit 1; }
done

host=$(rustc -vV | sed -n 's/^host: //p')
rustc_llvm=$(rustc -vV | sed -n 's/^LLVM version: //p')
profdata=${LLVM_PROFDATA:-$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata}
if [ ! -x "$profdata" ]; then
  echo "pgo-build.sh: no llvm-profdata at $profdata: run \`rustup component add llvm-tools\`" \
    "(or set LLVM_PROFDATA to one of LLVM $rustc_llvm)" >&2
  exit 1
fi
profdata_llvm=$("$profdata" --version | sed -n 's/.*LLVM version \([0-9.]*\).*/\1/p')
if [ "${profdata_llvm%%.*}" != "${rustc_llvm%%.*}" ]; then
  echo "pgo-build.sh: $profdata is LLVM $profdata_llvm, rustc is LLVM $rustc_llvm:" \
    "the profile would not be read (rustup component add llvm-tools)" >&2
  exit 1
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/suture-pgo.XXXXXX")
PID=""
cleanup() {
  [ -n "$PID" ] && kill "$PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

build() {  # build <target dir> <rustflags>
  (cd "$tree" && RUSTFLAGS="${RUSTFLAGS:-} $2" CARGO_TARGET_DIR="$1" \
    cargo build --release --locked --quiet -p suture-cmd --bin suture-gateway)
}
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

echo "==> 1/3 instrumented build ($TARGET/pgo/generate)" >&2
build "$TARGET/pgo/generate" "-Cprofile-generate=$WORK/profiles"
instrumented="$TARGET/pgo/generate/release/suture-gateway"

echo "==> 2/3 training" >&2
trained=0
for scene in "$HERE"/testdata/clusters/*/; do
  name=$(basename "$scene")
  [ "$name" = bad ] && continue
  port=$(free_port)
  metrics=$(free_port)
  "$instrumented" --self-signed --listen "127.0.0.1:$port" --metrics-listen "127.0.0.1:$metrics" \
    --cluster "$scene" --decision-log "$WORK/decisions-$name.log" >"$WORK/gateway-$name.log" 2>&1 &
  PID=$!
  waited=0
  until curl -sf "http://127.0.0.1:$metrics/readyz" >/dev/null; do
    if ! kill -0 "$PID" 2>/dev/null || [ "$waited" -ge 600 ]; then
      echo "pgo-build.sh: the instrumented gateway did not get ready on $name:" >&2
      tail -20 "$WORK/gateway-$name.log" >&2
      exit 1
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
  printf '%s: ' "$name" >&2
  python3 "$HERE/scripts/pgo-train.py" --port "$port" --rounds "$rounds" "$HERE"/testdata/reviews/*.json >&2
  curl -sf "http://127.0.0.1:$metrics/metrics" >/dev/null
  kill -TERM "$PID"
  wait "$PID" || { echo "pgo-build.sh: the instrumented gateway exited with an error on $name" >&2; exit 1; }
  PID=""
  trained=$((trained + 1))
done
[ "$trained" -gt 0 ] || { echo "pgo-build.sh: no scene under $HERE/testdata/clusters" >&2; exit 1; }
"$profdata" merge -o "$WORK/gateway.profdata" "$WORK/profiles"
if [ -n "$profile_out" ]; then
  mkdir -p "$(dirname "$profile_out")"
  cp "$WORK/gateway.profdata" "$profile_out"
fi

echo "==> 3/3 optimized build ($TARGET/pgo/use)" >&2
# The profile is read from this run's own directory on purpose: cargo does not track the file's
# contents, only the flags, so a fixed path could leave a build of an older profile in place.
build "$TARGET/pgo/use" "-Cprofile-use=$WORK/gateway.profdata"
mkdir -p "$(dirname "$out")"
cp "$TARGET/pgo/use/release/suture-gateway" "$out"
echo "$out"
