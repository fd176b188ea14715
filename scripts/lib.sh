# Shared by the scripts/bench-*.sh scripts (sourced, not run).
# Sets: repo (this checkout), bin (operator-rs, release-built), work (a temporary folder
# removed on exit, with any background job).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# operator-rs itself always builds in its own target dir (CARGO_TARGET_DIR is for the generated project).
CARGO_TARGET_DIR="$repo/target" cargo build --release --quiet --manifest-path "$repo/Cargo.toml"
bin="$repo/target/release/operator-rs"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

# scaffold_reference <dir>: init + Memcached (deploy-image) + Guestbook + Cluster
# (cluster-scoped) + a controller for the built-in Deployment.
scaffold_reference() {
  mkdir -p "$1"
  "$bin" -C "$1" init --domain example.com >/dev/null 2>&1
  "$bin" -C "$1" create api --group cache --version v1alpha1 --kind Memcached --image memcached:1.6 --image-container-port 11211 --run-as-user 1001 >/dev/null 2>&1
  "$bin" -C "$1" create api --group webapp --version v1 --kind Guestbook >/dev/null 2>&1
  "$bin" -C "$1" create api --group webapp --version v1 --kind Cluster --namespaced=false >/dev/null 2>&1
  "$bin" -C "$1" create api --group apps --version v1 --kind Deployment --resource=false --controller >/dev/null 2>&1
}

# fake_cluster <port> <kubeconfig>: scripts/fake-apiserver.py in the background on <port>, and a
# kubeconfig for it.
fake_cluster() {
  python3 "$repo/scripts/fake-apiserver.py" "$1" 2>/dev/null &
  cat > "$2" <<KC
apiVersion: v1
kind: Config
clusters: [{name: fake, cluster: {server: "http://127.0.0.1:$1"}}]
contexts: [{name: fake, context: {cluster: fake, user: fake, namespace: default}}]
current-context: fake
users: [{name: fake, user: {token: fake}}]
KC
  for _ in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$1/version" && return 0; sleep 0.1; done
  echo "the fake API server did not start" >&2; return 1
}
