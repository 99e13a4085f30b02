#!/usr/bin/env bash
# Latency inside kube-apiserver: what admission adds to an operator's requests, in one run.
#
#   SUTURE_E2E_K8S_BIN=/path/to/k8s-bin bench/apiserver/run.sh    # writes bench/apiserver/results.md
#   BASELINE_REF=HEAD~1 SUTURE_E2E_K8S_BIN=... bench/apiserver/run.sh   # this tree against a commit
#
# 1. Builds the release binaries (suture-gateway, kubectl-suture, suture-apiserver-bench).
# 2. Takes a cluster as the e2e suite does: SUTURE_E2E_K8S_BIN (a directory of kube-apiserver,
#    kube-controller-manager, etcd and kubectl: a control plane is started on loopback with the
#    node simulator) or SUTURE_E2E_KUBECONFIG (+ SUTURE_E2E_GATEWAY_HOST). docs/e2e.md, "Tested against
#    a real control plane", says how to get the binaries; this script builds none.
# 3. Installs the gateway as the suite does (rendered install, the install's own ServiceAccount
#    token) and starts a `--noop` twin with the same certificate; builds a database StatefulSet and
#    a web Deployment with budgets.
# 4. Puts four admission setups in force at once, each matched by its own identity: the gateway
#    judging with the pack and impact (a judged operator, through the install's webhook); the
#    gateway as a no-op webhook (a copy of that webhook pointed at the twin); kube-apiserver's
#    in-process ValidatingAdmissionPolicy with comparable request-only rules; no admission. Then
#    times dry-run requests (create a Deployment, delete a Pod, scale a StatefulSet up; each
#    admitted in every setup), the setups alternating request by request in an order drawn
#    afresh for each iteration.
# 5. Reports medians and p99s, what each setup adds to the median without admission, and Suture's
#    cost over the no-op webhook (also as the median of the paired differences).
#
# A change's effect is a few microseconds, and this machine drifts by more than that between runs
# an hour apart: to measure one, give the commit before it as BASELINE_REF (or a gateway binary as
# BASELINE_GATEWAY). That commit is checked out in a worktree under target/bench-baseline and its
# gateway built there with the same cargo command as this tree's (the packages built together
# decide the dependencies' features, which change the binary) and its paths mapped to this
# tree's. It then judges beside this build as a fifth setup (its own operator identity beside the
# judged one, its own copy of the webhook), and the report adds this build against it, request
# beside request. Each twin (the no-op, the baseline) runs from its own copy of its binary:
# processes running one file share its cached code, which favoured the gateway whose file the
# no-op twin shared. Two files still differ by up to about 0.02 ms at the client (7 us inside):
# read a smaller difference beside an A/A run (BASELINE_REF=HEAD on an unchanged tree) in the same
# window, or with the roles swapped (docs/benchmarks.md, "Latency inside kube-apiserver").
#
# CALIBRATE_PATH=1 instead sends the fifth setup to this build's own judging gateway: an A/A of
# everything around the gateway, which shows what the setups' asymmetry (one identity and one
# webhook configuration each) adds at the client.
#
# PGO=1 times the gateway as releases ship it: this tree's built with profile-guided
# optimization by scripts/pgo-build.sh (and a BASELINE_REF commit's built the same way, trained
# on this tree's reviews and scenes). GATEWAY=<path> times a given suture-gateway build instead of
# this tree's (it judges and serves as the no-op twin); GATEWAY=<PGO build> with
# BASELINE_GATEWAY=<plain build> of one commit measures what PGO gives.
#
# The judging gateway rehearses its judged path as the install renders it (`--keep-warm=2ms`), and
# a baseline build as this one does. KEEP_WARM=<period> sets this build's period (0s: off),
# BASELINE_KEEP_WARM the baseline's (0s: off, the flag left out, as a build older than the flag
# needs): with BASELINE_GATEWAY set to this same build and BASELINE_KEEP_WARM=0s, the report gives
# what rehearsals take off a sparse request. The no-op twin never judges, so never rehearses.
#
# Environment: SAMPLES (per setup and request, default 600), WARMUP (untimed iterations, 20),
# OUT (default bench/apiserver/results.md), BASELINE_REF (a commit), BASELINE_GATEWAY (a built
# suture-gateway; BASELINE_REF wins), CALIBRATE_PATH (1: the fifth setup is this build's gateway),
# PGO (1: both builds profile-guided), GATEWAY (a built suture-gateway for this build; PGO wins),
# BUILDS (which builds these are, in words, for the report), KEEP_WARM (this build's --keep-warm
# period), BASELINE_KEEP_WARM (the baseline's).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUT=${OUT:-$ROOT/bench/apiserver/results.md}
if [[ -z "${SUTURE_E2E_K8S_BIN:-}" && -z "${SUTURE_E2E_KUBECONFIG:-}" ]]; then
  echo "bench/apiserver/run.sh: set SUTURE_E2E_K8S_BIN or SUTURE_E2E_KUBECONFIG (docs/e2e.md: Tested against a real control plane)" >&2
  exit 2
fi
cd "$ROOT"
# Absolute: the baseline is built from another directory.
TARGET=$(realpath -m "${CARGO_TARGET_DIR:-$ROOT/target}")
# The packages built together decide the dependencies' features: the baseline is built with the
# same two.
build() {
  cargo build --release --locked -p suture-cmd -p suture-e2e --bin suture-gateway "$@"
}
if [[ -n "${BASELINE_REF:-}" ]]; then
  commit=$(git rev-parse --verify --quiet "${BASELINE_REF}^{commit}") || {
    echo "bench/apiserver/run.sh: BASELINE_REF=$BASELINE_REF is not a commit" >&2
    exit 2
  }
  # A fixed place, so that cargo reuses what an earlier baseline built; removed at exit.
  worktree="$TARGET/bench-baseline/tree"
  git worktree remove --force "$worktree" 2>/dev/null || rm -rf "$worktree"
  git worktree prune
  trap 'git -C "$ROOT" worktree remove --force "$worktree" 2>/dev/null || true' EXIT
  git worktree add --quiet --detach "$worktree" "$commit"
  echo "==> baseline: $(git log -1 --format='%h %s' "$commit")" >&2
  # Its source paths written as this tree's: the same sources then give the same code at the
  # same addresses, so what differs between the two builds is the change, not a layout shifted by
  # the panic messages' longer paths (that alone moved the judged requests by 0.015-0.036 ms).
  if [[ "${PGO:-0}" == 1 ]]; then
    RUSTFLAGS="${RUSTFLAGS:-} --remap-path-prefix=$worktree=$ROOT" \
      CARGO_TARGET_DIR="$TARGET/bench-baseline" "$ROOT/scripts/pgo-build.sh" --tree "$worktree" \
      --out "$TARGET/bench-baseline/pgo-suture-gateway" >/dev/null
    BASELINE_GATEWAY="$TARGET/bench-baseline/pgo-suture-gateway"
  else
    (cd "$worktree" &&
      RUSTFLAGS="${RUSTFLAGS:-} --remap-path-prefix=$worktree=$ROOT" \
        CARGO_TARGET_DIR="$TARGET/bench-baseline" build)
    BASELINE_GATEWAY="$TARGET/bench-baseline/release/suture-gateway"
  fi
fi
if [[ "${PGO:-0}" == 1 ]]; then
  GATEWAY=$("$ROOT/scripts/pgo-build.sh")
fi
build --bin kubectl-suture --bin suture-apiserver-bench
args=(--samples "${SAMPLES:-600}" --warmup "${WARMUP:-20}" --out "$OUT")
if [[ -n "${GATEWAY:-}" ]]; then
  args+=(--gateway "$GATEWAY")
fi
# Which builds were timed, for the report (BUILDS says it in words).
builds=${BUILDS:-}
if [[ -z "$builds" && "${PGO:-0}" == 1 ]]; then
  builds="profile-guided (scripts/pgo-build.sh): this tree"
  if [[ -n "${BASELINE_REF:-}" ]]; then builds+=" and the baseline"; fi
elif [[ -z "$builds" && -n "${GATEWAY:-}${BASELINE_GATEWAY:-}" ]]; then
  builds="this build ${GATEWAY:-built here}${BASELINE_GATEWAY:+, the baseline $BASELINE_GATEWAY}"
fi
if [[ -n "$builds" ]]; then
  args+=(--builds "$builds")
fi
if [[ -n "${BASELINE_GATEWAY:-}" ]]; then
  args+=(--baseline-gateway "$BASELINE_GATEWAY")
elif [[ "${CALIBRATE_PATH:-0}" == 1 ]]; then
  args+=(--calibrate-path)
fi
if [[ -n "${KEEP_WARM:-}" ]]; then
  args+=(--keep-warm "$KEEP_WARM")
fi
if [[ -n "${BASELINE_KEEP_WARM:-}" ]]; then
  args+=(--baseline-keep-warm "$BASELINE_KEEP_WARM")
fi
"$TARGET/release/suture-apiserver-bench" "${args[@]}"
echo "==> $OUT" >&2
