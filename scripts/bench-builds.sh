#!/usr/bin/env bash
# Benchmarks that need cargo builds of a generated project (minutes, not milliseconds):
#  1. cold and warm `cargo build` of a freshly scaffolded project (init + one create api);
#  2. `operator-rs generate crds` against the kube-rs way (`cargo run --bin crdgen`, cold and warm)
#     on the same project of $KINDS kinds (default 50).
# Usage: scripts/bench-builds.sh [KINDS]     Figures go to BENCHMARKS.md.
KINDS=${1:-50}
source "$(dirname "$0")/lib.sh"
secs() { local s e; s=$(date +%s.%N); "$@" >/dev/null 2>&1; e=$(date +%s.%N); echo "$e - $s" | bc; }

echo "== 1. cargo build of a generated project (init + create api Memcached)"
mkdir "$work/one-op"
"$bin" -C "$work/one-op" init --domain example.com >/dev/null 2>&1
"$bin" -C "$work/one-op" create api --group cache --version v1alpha1 --kind Memcached >/dev/null 2>&1
export CARGO_TARGET_DIR="$work/target-one"
(cd "$work/one-op" && cargo fetch --quiet)
echo "cold cargo build:  $(cd "$work/one-op" && secs cargo build) s"
echo "// touched" >> "$work/one-op/src/controllers/memcached.rs"
echo "warm cargo build:  $(cd "$work/one-op" && secs cargo build) s   (after editing one controller)"

echo "== 2. generate crds vs cargo run --bin crdgen, $KINDS kinds"
mkdir "$work/many-op"
"$bin" -C "$work/many-op" init --domain example.com >/dev/null 2>&1
{
  echo "//! The kube-rs way: print every kind's crd() (compiled)."
  echo "use kube::CustomResourceExt;"
  echo "fn main() {"
} > "$work/crdgen.rs"
for i in $(seq 0 $((KINDS - 1))); do
  "$bin" -C "$work/many-op" create api --group g --version v1 --kind "Kind$i" --controller=false >/dev/null 2>&1
  echo "    print!(\"---\\n{}\", serde_saphyr::to_string(&many_op::api::v1::Kind$i::crd()).unwrap());" >> "$work/crdgen.rs"
done
echo "}" >> "$work/crdgen.rs"
mkdir -p "$work/many-op/src/bin" && cp "$work/crdgen.rs" "$work/many-op/src/bin/crdgen.rs"
sed -i 's/^\[dev-dependencies\]/[dependencies.serde-saphyr]\nversion = "2.1"\n\n[dev-dependencies]/' "$work/many-op/Cargo.toml"
# Avoid a duplicate dev-dependency entry.
python3 - "$work/many-op/Cargo.toml" <<'PY'
import sys, re
p = sys.argv[1]; s = open(p).read()
head, sep, dev = s.partition("[dev-dependencies]")
dev = "\n".join(l for l in dev.split("\n") if not l.startswith("serde-saphyr"))
open(p, "w").write(head + sep + dev)
PY
export CARGO_TARGET_DIR="$work/target-many"
(cd "$work/many-op" && cargo fetch --quiet)
cold=$(cd "$work/many-op" && secs cargo run --bin crdgen)
warm=$(cd "$work/many-op" && secs cargo run --bin crdgen)
echo "// touched" >> "$work/many-op/src/api/v1/kind0.rs"
edit=$(cd "$work/many-op" && secs cargo run --bin crdgen)
runs=()
for _ in $(seq 1 20); do runs+=("$(cd "$work/many-op" && secs "$bin" generate crds)"); done
median=$(printf '%s\n' "${runs[@]}" | sort -n | sed -n 10p)
echo "cargo run --bin crdgen, cold:             $cold s"
echo "cargo run --bin crdgen, warm (no change): $warm s"
echo "cargo run --bin crdgen, after an edit:    $edit s"
echo "operator-rs generate crds (median of 20): $median s"
echo "ratio cold/static: $(echo "$cold / $median" | bc)x, edit/static: $(echo "$edit / $median" | bc)x"
