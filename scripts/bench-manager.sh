#!/usr/bin/env bash
# The generated manager's release binary size, start-up time to ready and idle RSS, measured
# against a fake API server on loopback (scripts/fake-apiserver.py: empty lists, open watches).
# Scaffolds init + Memcached (deploy-image) + Guestbook + a Deployment controller, builds it in
# release, starts the manager without leader election, polls /readyz, waits 10 s, reads
# /proc/<pid>/status, then sends SIGTERM and checks the exit code.
# Usage: scripts/bench-manager.sh        Figures go to BENCHMARKS.md.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cargo build --release --quiet --manifest-path "$repo/Cargo.toml"
bin="$repo/target/release/operator-rs"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
proj="$work/memcached-operator"
mkdir "$proj"
"$bin" -C "$proj" init --domain example.com >/dev/null 2>&1
"$bin" -C "$proj" create api --group cache --version v1alpha1 --kind Memcached --image memcached:1.6 --image-container-port 11211 --run-as-user 1001 >/dev/null 2>&1
"$bin" -C "$proj" create api --group webapp --version v1 --kind Guestbook >/dev/null 2>&1
"$bin" -C "$proj" create api --group apps --version v1 --kind Deployment --resource=false --controller >/dev/null 2>&1
(cd "$proj" && CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$work/target}" cargo build --release --quiet)
manager="${CARGO_TARGET_DIR:-$work/target}/release/manager"
strip -o "$work/manager.stripped" "$manager"
echo "release binary: $(stat -c %s "$manager") bytes, stripped $(stat -c %s "$work/manager.stripped") bytes"

python3 "$repo/scripts/fake-apiserver.py" 18443 2>/dev/null &
sleep 1
cat > "$work/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: fake, cluster: {server: "http://127.0.0.1:18443"}}]
contexts: [{name: fake, context: {cluster: fake, user: fake, namespace: default}}]
current-context: fake
users: [{name: fake, user: {token: fake}}]
KC
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
