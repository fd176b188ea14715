# Shared by the scripts/bench-*.sh scripts (sourced, not run).
# Sets: repo (this checkout), bin (operator-rs, release-built), work (a temporary folder
# removed on exit, with any background job).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# operator-rs itself always builds in its own target dir (CARGO_TARGET_DIR is for the generated project).
CARGO_TARGET_DIR="$repo/target" cargo build --release --quiet --manifest-path "$repo/Cargo.toml"
bin="$repo/target/release/operator-rs"
work=$(mktemp -d)
# Background jobs get SIGTERM, then SIGKILL: a kube-apiserver whose etcd is gone never finishes
# its graceful shutdown, and would outlive the script.
cleanup() {
  local jobs
  jobs=$(jobs -p)
  if [ -n "$jobs" ]; then
    # shellcheck disable=SC2086 # one pid per word
    kill $jobs 2>/dev/null || true
    local job alive
    for _ in $(seq 1 50); do
      alive=
      for job in $jobs; do kill -0 "$job" 2>/dev/null && alive=1; done
      [ -n "$alive" ] || break
      sleep 0.1
    done
    # shellcheck disable=SC2086 # one pid per word
    kill -KILL $jobs 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

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

# real_cluster <kubeconfig>: a real control plane in the background (etcd, kube-apiserver and
# kube-controller-manager from $KUBEBUILDER_ASSETS, else ../shared/k8s/install.sh), with the
# flags of shared/k8s/README.md on free loopback ports, and an admin kubeconfig for it.
# kube-controller-manager's client may send 500 requests a second instead of its default 20: at 20
# it took about a second for each new Deployment (3,000 owned Deployments: most of an hour), and
# the settled snapshot of the harness waits until it has observed them all.
real_cluster() {
  local assets=${KUBEBUILDER_ASSETS:-$("$repo/../shared/k8s/install.sh")}
  local d="$work/cluster" ports
  mkdir -p "$d/certs"
  read -r -a ports < <(python3 -c 'import socket
s=[socket.socket() for _ in range(4)]
[x.bind(("127.0.0.1",0)) for x in s]
print(" ".join(str(x.getsockname()[1]) for x in s))')
  openssl genrsa -out "$d/sa.key" 2048 2>/dev/null
  openssl rsa -in "$d/sa.key" -pubout -out "$d/sa.pub" 2>/dev/null
  echo 'bench-admin-token,admin,admin,"system:masters"' > "$d/tokens.csv"
  "$assets/etcd" --data-dir "$d/etcd" --listen-client-urls "http://127.0.0.1:${ports[0]}" \
    --advertise-client-urls "http://127.0.0.1:${ports[0]}" --listen-peer-urls "http://127.0.0.1:${ports[1]}" \
    --initial-advertise-peer-urls "http://127.0.0.1:${ports[1]}" \
    --initial-cluster "default=http://127.0.0.1:${ports[1]}" --unsafe-no-fsync >"$d/etcd.log" 2>&1 &
  "$assets/kube-apiserver" --etcd-servers "http://127.0.0.1:${ports[0]}" --bind-address 127.0.0.1 \
    --advertise-address 127.0.0.1 --secure-port "${ports[2]}" --cert-dir "$d/certs" \
    --token-auth-file "$d/tokens.csv" --authorization-mode RBAC \
    --service-account-issuer https://kubernetes.default.svc --service-account-key-file "$d/sa.pub" \
    --service-account-signing-key-file "$d/sa.key" --service-cluster-ip-range 10.96.0.0/16 >"$d/apiserver.log" 2>&1 &
  cat > "$1" <<KC
apiVersion: v1
kind: Config
clusters: [{name: envtest, cluster: {server: "https://127.0.0.1:${ports[2]}", insecure-skip-tls-verify: true}}]
contexts: [{name: envtest, context: {cluster: envtest, user: admin, namespace: default}}]
current-context: envtest
users: [{name: admin, user: {token: bench-admin-token}}]
KC
  for _ in $(seq 1 600); do
    kubectl --kubeconfig "$1" get --raw /readyz >/dev/null 2>&1 && break; sleep 0.1
  done
  kubectl --kubeconfig "$1" get --raw /readyz >/dev/null || { tail "$d/apiserver.log" >&2; return 1; }
  if [ -x "$assets/kube-controller-manager" ]; then
    "$assets/kube-controller-manager" --kubeconfig "$1" --authentication-kubeconfig "$1" \
      --authorization-kubeconfig "$1" --bind-address 127.0.0.1 --secure-port "${ports[3]}" \
      --leader-elect=false --controllers '*' --service-account-private-key-file "$d/sa.key" \
      --root-ca-file "$d/certs/apiserver.crt" --use-service-account-credentials=false \
      --kube-api-qps 500 --kube-api-burst 1000 >"$d/kcm.log" 2>&1 &
  fi
}
