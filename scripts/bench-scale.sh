#!/usr/bin/env bash
# The generated manager at scale next to the reference operator controller-rs, on one real
# control plane (etcd, kube-apiserver, kube-controller-manager from $KUBEBUILDER_ASSETS or
# ../shared/k8s; scripts/lib.sh real_cluster), one after the other, release builds.
#
# controller-rs (github:kube-rs/controller-rs, from $CONTROLLER_RS: a checkout or git dir, else
# /work/.mirror's copy, else a clone) is built with its Cargo.toml bumped to kube 5 /
# k8s-openapi 0.29 and no source change. With n of its Documents waiting in a namespace it
# prints: catch-up (time until every Document's status reflects it, peak RSS), the writes of a
# settled restart, live creation of n more, and deletion of all 2n as a collection (a namespace
# deletion never ends for it: its cleanup event is refused there, and it keeps its finalizer).
#
# The generated manager goes through the generated project's own harness (`make test-e2e
# E2E_OBJECTS=<n>`: the `*_at_scale` tests of tests/e2e.rs, release build), which prints the
# scale lab's figures for each kind (operator_rs_runtime::testing::scale::Figures).
#
# Usage: [BENCH_PROJECT=dir] scripts/bench-scale.sh [n] [test]   (default 3000; test: only the
# `<test>_at_scale` test, e.g. `guestbook_v1`, instead of the whole suite). Figures go to
# BENCHMARKS.md.
n=${1:-3000}
only=${2:-}
source "$(dirname "$0")/lib.sh"
# Builds outlive a run (the generated crate is rebuilt, its dependencies are not).
target=${CARGO_TARGET_DIR:-$repo/target/bench-scale}
# controller-rs builds outside this workspace (cargo would take it for a member).
crs=${BENCH_CACHE:-$HOME/.cache/operator-rs-bench}/controller-rs

# build_controller_rs: controller-rs's source in $crs/src, bumped to kube 5, built in release.
build_controller_rs() {
  local source=${CONTROLLER_RS:-/work/.mirror/kube-rs+controller-rs/repo}
  if [ ! -f "$crs/src/Cargo.toml" ]; then
    mkdir -p "$crs/src"
    if [ -d "$source/src" ]; then
      cp -r "$source/." "$crs/src"
    elif git -C "$source" rev-parse --git-dir >/dev/null 2>&1; then
      git -C "$source" archive HEAD | tar -x -C "$crs/src"
    else
      git clone --depth 1 https://github.com/kube-rs/controller-rs "$crs/src"
    fi
    sed -i -e 's/^k8s-openapi = { version = "[^"]*"/k8s-openapi = { version = "0.29"/' \
      -e '/^\[dependencies.kube\]/,/^version/s/^version = "[^"]*"/version = "5"/' "$crs/src/Cargo.toml"
  fi
  grep -q '^k8s-openapi = { version = "0.29"' "$crs/src/Cargo.toml" &&
    grep -A2 '^\[dependencies.kube\]' "$crs/src/Cargo.toml" | grep -q '^version = "5"' ||
    { echo "controller-rs: cannot bump $crs/src/Cargo.toml to kube 5 / k8s-openapi 0.29" >&2; return 1; }
  CARGO_TARGET_DIR="$crs/target" cargo build --release --quiet --bin controller \
    --manifest-path "$crs/src/Cargo.toml"
}

# documents <from> <to> <namespace>: controller-rs Documents doc-<from>..doc-<to - 1>, as a List.
documents() {
  python3 - "$@" <<'PY'
import json, sys
a, b, ns = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
items = [{"apiVersion": "kube.rs/v1", "kind": "Document",
          "metadata": {"name": f"doc-{i}", "namespace": ns},
          "spec": {"title": f"Document {i}", "hide": False, "content": "lorem ipsum"}}
         for i in range(a, b)]
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
PY
}

k() { kubectl --kubeconfig "$work/kubeconfig" "$@"; }
now() { date +%s.%N; }
since() { echo "$(now) - $1" | bc | xargs printf '%.1f'; }
# cpu <name>: CPU seconds (user + system) used so far by this run's processes of this name.
cpu() {
  local total=0 p
  for p in $(pgrep -P $$ -x "$1"); do
    total=$((total + $(awk '{print $14 + $15}' "/proc/$p/stat")))
  done
  echo "scale=1; $total / $(getconf CLK_TCK)" | bc
}
server_cpu() { echo "etcd $(cpu etcd) s, kube-apiserver $(cpu kube-apiserver) s, kube-controller-manager $(cpu kube-controller) s"; }
peak() { awk '/VmHWM/ {printf "%.1f", $2 / 1024}' "/proc/$1/status"; }

# settled <count> <namespace>: waits (polling twice a second, like the harness) until <count>
# Documents have a status that reflects their spec (`hide` is false for all of them).
settled() {
  until [ "$(k get documents -n "$2" -o jsonpath='{range .items[*]}{.status.hidden}{"\n"}{end}' |
    grep -c '^false$')" -ge "$1" ]; do
    kill -0 "$pid" || { tail "$work/controller-rs.log" >&2; return 1; }
    sleep 0.5
  done
}

start_controller_rs() {
  if ss -ltn | grep -q ':8080 '; then
    echo "controller-rs serves on :8080 (hard-coded), which something else holds" >&2
    return 1
  fi
  KUBECONFIG="$work/kubeconfig" "$crs/target/release/controller" >>"$work/controller-rs.log" 2>&1 &
  pid=$!
}

stop_controller_rs() { kill -TERM "$pid"; wait "$pid" || true; }

# controller_rs_at_scale: the figures of controller-rs, as the harness prints them for a kind.
controller_rs_at_scale() {
  local ns=controller-rs-at-scale t caught_up catch_up_peak resync written live live_peak
  k apply --server-side -f "$crs/src/yaml/crd.yaml" >/dev/null
  k wait --for condition=established --timeout=60s crd/documents.kube.rs >/dev/null
  k create namespace "$ns" >/dev/null
  documents 0 "$n" "$ns" >"$work/docs-a.json"
  documents "$n" $((2 * n)) "$ns" >"$work/docs-b.json"
  k create -f "$work/docs-a.json" >/dev/null

  t=$(now); start_controller_rs; settled "$n" "$ns"
  caught_up=$(since "$t"); catch_up_peak=$(peak "$pid")

  k get documents -n "$ns" -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.resourceVersion}{"\n"}{end}' >"$work/before"
  stop_controller_rs
  t=$(now); start_controller_rs
  until [ "$(curl -s http://127.0.0.1:8080/metrics | awk '/^doc_ctrl_reconcile_runs_total/ {print $2}')" -ge "$n" ] 2>/dev/null; do
    sleep 0.5
  done
  resync=$(since "$t")
  sleep 2 # let writes of the last reconciles land, as the harness does
  k get documents -n "$ns" -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.resourceVersion}{"\n"}{end}' >"$work/after"
  written=$(sort "$work/before" "$work/after" | uniq -u | cut -d' ' -f1 | sort -u | wc -l)

  t=$(now); k create -f "$work/docs-b.json" >/dev/null; settled $((2 * n)) "$ns"
  live=$(since "$t"); live_peak=$(peak "$pid")

  t=$(now); k delete documents --all -n "$ns" --wait=false >/dev/null
  until [ "$(k get documents -n "$ns" -o name | wc -l)" -eq 0 ]; do sleep 0.5; done
  deleted=$(since "$t")
  echo "controller-rs used $(echo "scale=1; $(awk '{print $14 + $15}' "/proc/$pid/stat") / $(getconf CLK_TCK)" | bc) s of CPU since its restart"
  stop_controller_rs
  k delete namespace "$ns" --wait=false >/dev/null
  echo "controller-rs (kube 5) Document x $n, figures of this run:"
  echo "- catch-up: a controller started with $n waiting had them all settled after ${caught_up}s, peak memory $catch_up_peak MiB"
  echo "- settled resync: a restarted controller reconciled all $n in ${resync}s and changed $written of them"
  echo "- live: $n more created (kubectl create, one by one) while it ran, all settled after ${live}s; memory peak $live_peak MiB"
  echo "- deletion of all $((2 * n)) (as a collection): ${deleted}s"
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
build_controller_rs
# BENCH_PROJECT: an existing scaffolded project to measure instead of a fresh one (to iterate).
proj=${BENCH_PROJECT:-$work/memcached-operator}
[ -n "${BENCH_PROJECT:-}" ] || scaffold_reference "$proj"
(cd "$proj" && CARGO_TARGET_DIR="$target" cargo test --release --quiet --test e2e --no-run)
real_cluster "$work/kubeconfig"

# BENCH_CONTROLLER_RS=0: the generated manager only (to iterate; compare only figures of one run).
if [ "${BENCH_CONTROLLER_RS:-1}" != 0 ]; then
  echo "control plane CPU before controller-rs: $(server_cpu)"
  controller_rs_at_scale
  echo "control plane CPU after controller-rs: $(server_cpu)"
  echo "load average after controller-rs: $(cut -d' ' -f1-3 /proc/loadavg)"
fi
cd "$proj"
if [ -n "$only" ]; then
  run=(cargo test --release --test e2e -- --ignored --nocapture --test-threads=1 "${only}_at_scale")
else
  run=(make test-e2e E2E_OBJECTS="$n")
fi
# The whole output (the manager's log tail when a test fails) stays in $target/bench-scale.log.
KUBECONFIG="$work/kubeconfig" CARGO_TARGET_DIR="$target" E2E_OBJECTS="$n" "${run[@]}" 2>&1 |
  tee "$target/bench-scale.log" | grep -E -A3 "figures of this run|^scale-test |^- |^test |test result|panicked" || true
echo "control plane CPU at the end: $(server_cpu)"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
