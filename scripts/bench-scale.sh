#!/usr/bin/env bash
# The generated manager at scale, through the generated project's own harness
# (`make test-e2e E2E_OBJECTS=<n>`, i.e. the `*_at_scale` tests of tests/e2e.rs, release build),
# run against a real control plane (etcd, kube-apiserver, kube-controller-manager from
# $KUBEBUILDER_ASSETS or ../shared/k8s; scripts/lib.sh real_cluster). For each kind it prints the
# catch-up on n waiting objects (time, peak memory), the writes of a settled resync, the live
# reconcile rate of n more, and the deletion time.
# Usage: scripts/bench-scale.sh [n]   (default 3000). Figures go to BENCHMARKS.md.
n=${1:-3000}
source "$(dirname "$0")/lib.sh"
proj="$work/memcached-operator"
scaffold_reference "$proj"
real_cluster "$work/kubeconfig"
cd "$proj"
KUBECONFIG="$work/kubeconfig" CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$work/target}" \
  make test-e2e E2E_OBJECTS="$n" 2>&1 | grep -E "figures of this run|^- |^test |test result"
