#!/usr/bin/env bash
# Latency inside kube-apiserver: what admission adds to an operator's requests, in one run.
#
#   SUTURE_E2E_K8S_BIN=/path/to/k8s-bin bench/apiserver/run.sh    # writes bench/apiserver/results.md
#
# 1. Builds the release binaries (suture-gateway, kubectl-suture, suture-apiserver-bench).
# 2. Takes a cluster as the e2e suite does: SUTURE_E2E_K8S_BIN (a directory of kube-apiserver,
#    kube-controller-manager, etcd and kubectl: a control plane is started on loopback with the
#    node simulator) or SUTURE_E2E_KUBECONFIG (+ SUTURE_E2E_GATEWAY_HOST). README, "Tested against
#    a real control plane", says how to get the binaries; this script builds none.
# 3. Installs the gateway as the suite does (rendered install, the install's own ServiceAccount
#    token) and starts a `--noop` twin with the same certificate; builds a database StatefulSet and
#    a web Deployment with budgets.
# 4. Puts four admission setups in force at once, each matched by its own identity: the gateway
#    judging with the pack and impact (a judged operator, through the install's webhook); the
#    gateway as a no-op webhook (a copy of that webhook pointed at the twin); kube-apiserver's
#    in-process ValidatingAdmissionPolicy with comparable request-only rules; no admission. Then
#    times dry-run requests (create a Deployment, delete a Pod, scale a StatefulSet up; each
#    admitted in every setup), the setups alternating request by request in a rotating order.
# 5. Reports medians and p99s, what each setup adds to the median without admission, and Suture's
#    cost over the no-op webhook (also as the median of the paired differences).
#
# Environment: SAMPLES (per setup and request, default 600), WARMUP (untimed iterations, 20),
# OUT (default bench/apiserver/results.md).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUT=${OUT:-$ROOT/bench/apiserver/results.md}
if [[ -z "${SUTURE_E2E_K8S_BIN:-}" && -z "${SUTURE_E2E_KUBECONFIG:-}" ]]; then
  echo "bench/apiserver/run.sh: set SUTURE_E2E_K8S_BIN or SUTURE_E2E_KUBECONFIG (README: Tested against a real control plane)" >&2
  exit 2
fi
cd "$ROOT"
cargo build --release --locked -p suture-cmd -p suture-e2e --bin suture-gateway --bin kubectl-suture \
  --bin suture-apiserver-bench
"${CARGO_TARGET_DIR:-$ROOT/target}/release/suture-apiserver-bench" \
  --samples "${SAMPLES:-600}" --warmup "${WARMUP:-20}" --out "$OUT"
echo "==> $OUT" >&2
