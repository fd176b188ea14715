#!/usr/bin/env bash
# The generated manager's release binary size, start-up time to ready and idle RSS, measured
# against a real control plane on loopback (scripts/lib.sh real_cluster, with no objects).
# Scaffolds init + Memcached (deploy-image) + Guestbook + Cluster + a Deployment controller, builds it in
# release, starts the manager without leader election, polls /readyz, waits 10 s, reads
# /proc/<pid>/status, then sends SIGTERM and checks the exit code.
# Usage: scripts/bench-manager.sh        Figures go to BENCHMARKS.md.
source "$(dirname "$0")/lib.sh"
proj="$work/memcached-operator"
scaffold_reference "$proj"
(cd "$proj" && CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$work/target}" cargo build --release --quiet)
manager="${CARGO_TARGET_DIR:-$work/target}/release/manager"
strip -o "$work/manager.stripped" "$manager"
echo "release binary: $(stat -c %s "$manager") bytes, stripped $(stat -c %s "$work/manager.stripped") bytes"

real_cluster "$work/kubeconfig"
kubectl --kubeconfig "$work/kubeconfig" apply --server-side -f "$proj/config/crd/bases" >/dev/null
kubectl --kubeconfig "$work/kubeconfig" wait --for condition=established --timeout=60s crd --all >/dev/null
start=$(date +%s.%N)
KUBECONFIG="$work/kubeconfig" POD_NAMESPACE=default "$manager" \
  --metrics-bind-address 127.0.0.1:18080 --health-probe-bind-address 127.0.0.1:18081 >"$work/manager.log" 2>&1 &
pid=$!
for _ in $(seq 1 1000); do
  if [ "$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:18081/readyz)" = 200 ]; then
    echo "ready after $(echo "$(date +%s.%N) - $start" | bc) s"
    break
  fi
  sleep 0.01
done
sleep 10
grep -E "VmRSS|VmHWM" "/proc/$pid/status"
kill -TERM "$pid"
wait "$pid" && echo "SIGTERM: exit 0" || echo "SIGTERM: exit $?"
