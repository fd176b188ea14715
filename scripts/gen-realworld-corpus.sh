#!/usr/bin/env bash
# Regenerate fixtures/crdgen-realworld/: for every line of its SOURCES file, the public CRD at
# <repository>@<commit>:<path> turned into Rust types by kopium (`cargo install kopium`), with the
# mechanical fixes kube 5 needs, then rustfmt. Then record kube-derive's output for them
# (`cargo test --test crdgen -- --ignored realworld::records_kube_derive_output`): the test
# tests/crdgen/realworld.rs checks `operator-rs generate crds` gives the same CRDs.
#
# Usage: scripts/gen-realworld-corpus.sh [MIRRORS]
#   MIRRORS: a folder of bare clones named <owner>+<name>/repo (read with `git show`); without it,
#   each file is downloaded from raw.githubusercontent.com.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
out="$here/fixtures/crdgen-realworld"
mirrors="${1:-}"
command -v kopium >/dev/null || { echo "kopium is not installed: cargo install kopium" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mods=()
# kopium drops the CRD's annotations; a protected group's (`*.k8s.io`) API approval is kept on the
# kind as `#[kube(annotation(..))]`, without which kube-apiserver (and `generate crds`) refuse it.
approval() {
    local value
    value=$(sed -n 's/^ *api-approved.kubernetes.io: *//p' "$1" | head -1 | tr -d "'\"")
    if [ -n "$value" ]; then
        sed -e "0,/^#\[kube(/s//#[kube(annotation(\"api-approved.kubernetes.io\", \"$value\"))]\n#[kube(/"
    else
        cat
    fi
}
while read -r module repo commit path; do
    case "$module" in ''|'#'*) continue ;; esac
    yaml="$tmp/$module.yaml"
    if [ -n "$mirrors" ] && [ -d "$mirrors/${repo/\//+}/repo" ]; then
        git -C "$mirrors/${repo/\//+}/repo" show "$commit:$path" >"$yaml"
    else
        curl -fsSL "https://raw.githubusercontent.com/$repo/$commit/$path" -o "$yaml"
    fi
    {
        echo "//! kopium $(kopium --version | awk '{print $2}') of $repo@$commit:$path"
        echo "//! (regenerate: scripts/gen-realworld-corpus.sh)"
        kopium -f "$yaml" --auto \
            | grep -v '^// kopium command:' | grep -v '^// kopium version:' \
            | sed -e 's/^#\[allow(unused_imports)\]$/#[allow(unused_imports, clippy::all)]/' \
            | approval "$yaml"
    } >"$out/$module.rs"
    mods+=("$module")
done <"$out/SOURCES"
# Mechanical fixes for kube 5 live here (none needed for kopium 0.24 output so far).
for m in "${mods[@]}"; do rustfmt --edition 2024 "$out/$m.rs"; done
echo "wrote ${#mods[@]} modules to $out; now record kube-derive's output for them:"
echo "  cargo test --test crdgen -- --ignored realworld::records_kube_derive_output"
