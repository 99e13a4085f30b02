#!/usr/bin/env bash
# What one cold judged request fetches, step by step, counted by valgrind: instructions, and the
# instruction and data lines (64 bytes) missed in the first-level caches after the caches were
# emptied. A sparse admission request (kube-apiserver calls a webhook a few times a second) finds
# its code and data evicted by the rest of the machine, so its time is about its instructions at
# the warm pace plus one fetch from the shared cache per line missed; unlike a timing, these
# counts are the same from run to run, so two builds compare on them to a line.
#
#   bench/gateway/footprint.sh [REVIEW [SNAPSHOT]]
#       (default: the database scene's Pod DELETE, testdata/clusters/database)
#
# It builds `parse_cost` (gateway/examples) with line tables into target/footprint, and runs its
# `read + finish + evaluate` step (the evaluation lane's whole work from a body) under callgrind
# with the cache simulator, writing through 16 MiB before each request (COLD=16). Each step is
# one run that collects only inside the step's function (--toggle-collect), at two round counts
# (ROUNDS, default 12, against 2): their difference over the rounds between is one request,
# without start-up (loading the policies and the snapshot) and without the one judging
# `parse_cost` does after its rounds. Needs valgrind (apt-get install valgrind).
#
# PROFILE=<merged profile> (scripts/pgo-build.sh --profile-out) builds into
# target/footprint-pgo with it, to count the profile-guided layout of the same steps.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
REVIEW=${1:-$ROOT/testdata/reviews/pod-delete-pg-main-0.json}
SNAPSHOT=${2:-$ROOT/testdata/clusters/database}
ROUNDS=${ROUNDS:-12}
WORK=$(mktemp -d /tmp/suture-footprint.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
[ "$ROUNDS" -gt 2 ] || { echo "ROUNDS must be more than 2" >&2; exit 1; }

TARGET="$ROOT/target/footprint"
flags=${RUSTFLAGS:-}
if [[ -n "${PROFILE:-}" ]]; then
  [ -f "$PROFILE" ] || { echo "PROFILE=$PROFILE: no such file" >&2; exit 1; }
  TARGET="$ROOT/target/footprint-pgo"
  flags="$flags -Cprofile-use=$(realpath "$PROFILE")"
fi
(cd "$ROOT" && RUSTFLAGS="$flags" CARGO_PROFILE_RELEASE_DEBUG=line-tables-only CARGO_TARGET_DIR="$TARGET" \
  cargo build --release --quiet -p suture-gateway --example parse_cost)
BIN="$TARGET/release/examples/parse_cost"

# The steps, each a function a request runs once: its name as callgrind demangles it.
STEPS=(
  "read the review=policies_cel::eval::wire_review::WireReview::read"
  "finish the request=policies_cel::eval::wire_review::WireReview::into_request"
  "evaluate (all of it)=policies_cel::eval::evaluate_in"
  "  the estimate=policies_cel::impact::estimate"
  "  the estimate as CEL=*::to_value_of"
)
for step in "${STEPS[@]}"; do
  name=${step%%=*} function=${step#*=}
  for rounds in 2 "$ROUNDS"; do
    (cd "$ROOT" && ONLY="read + finish + evaluate" COLD=16 ROUNDS=$rounds \
      valgrind --tool=callgrind --cache-sim=yes --toggle-collect="$function" \
      --callgrind-out-file="$WORK/out" "$BIN" "$REVIEW" "$SNAPSHOT" >/dev/null 2>&1)
    summary=$(grep -m1 '^summary:' "$WORK/out" | cut -d' ' -f2-) ||
      { echo "footprint.sh: callgrind wrote no counts for '$name' at $rounds rounds" >&2; exit 1; }
    printf '%s\t%s\t%s\n' "$name" "$rounds" "$summary"
  done
done | python3 "$ROOT/bench/gateway/footprint.py" --rounds "$ROUNDS"
