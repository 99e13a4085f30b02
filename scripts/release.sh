#!/usr/bin/env bash
# Builds the kubectl-suture release archives (one tar.gz per krew platform, holding the binary
# and README.md) and writes DIR/krew-manifest.yaml: the repository's manifest with each built
# archive's sha256 filled in. Install from it with
#   kubectl krew install --manifest=DIR/krew-manifest.yaml --archive=DIR/<archive>
#
# Usage: scripts/release.sh [--out DIR] [--platforms "linux/amd64 darwin/arm64 ..."] [--binary PATH]
#   --out DIR        where archives and the manifest go (default: dist)
#   --platforms LIST which krew platforms to build (default: all four in the manifest); each is
#                    `cargo build --release --target <triple>`, so its Rust target (rustup target
#                    add) and a linker for it must be installed — a platform that cannot be built
#                    is reported and its sha256 stays zero (the script exits 1)
#   --binary PATH    package this already-built binary for the host platform instead of building
set -euo pipefail

cd "$(dirname "$0")/.."
out=dist
platforms="linux/amd64 linux/arm64 darwin/amd64 darwin/arm64"
binary=""
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --platforms) platforms="$2"; shift 2 ;;
    --binary) binary="$2"; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "release.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

version="v$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)"
manifest_version="$(sed -n 's/^  version: //p' krew-manifest.yaml)"
if [ "$version" != "$manifest_version" ]; then
  echo "release.sh: Cargo.toml says $version but krew-manifest.yaml says $manifest_version" >&2
  exit 1
fi

triple() {
  case "$1" in
    linux/amd64) echo x86_64-unknown-linux-gnu ;;
    linux/arm64) echo aarch64-unknown-linux-gnu ;;
    darwin/amd64) echo x86_64-apple-darwin ;;
    darwin/arm64) echo aarch64-apple-darwin ;;
    *) echo "release.sh: unknown platform $1" >&2; exit 2 ;;
  esac
}

host_platform() {
  local os arch
  case "$(uname -s)" in Linux) os=linux ;; Darwin) os=darwin ;; *) os=unknown ;; esac
  case "$(uname -m)" in x86_64|amd64) arch=amd64 ;; aarch64|arm64) arch=arm64 ;; *) arch=unknown ;; esac
  echo "$os/$arch"
}

sha256() {
  if command -v sha256sum >/dev/null; then sha256sum "$1" | cut -d' ' -f1; else shasum -a 256 "$1" | cut -d' ' -f1; fi
}

mkdir -p "$out"
cp krew-manifest.yaml "$out/krew-manifest.yaml"
failed=0
for platform in $platforms; do
  os="${platform%/*}"; arch="${platform#*/}"
  archive="kubectl-suture_${version}_${os}_${arch}.tar.gz"
  bin=""
  if [ -n "$binary" ]; then
    if [ "$platform" = "$(host_platform)" ]; then bin="$binary"; else
      echo "skipped $platform: --binary packages the host platform ($(host_platform)) only" >&2; failed=1; continue
    fi
  else
    target="$(triple "$platform")"
    if ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
      echo "skipped $platform: Rust target $target is not installed (rustup target add $target)" >&2; failed=1; continue
    fi
    if ! cargo build --release --locked --bin kubectl-suture --target "$target"; then
      echo "skipped $platform: the build for $target failed (a linker for it?)" >&2; failed=1; continue
    fi
    bin="target/$target/release/kubectl-suture"
  fi
  stage="$(mktemp -d)"
  cp "$bin" "$stage/kubectl-suture"
  cp README.md "$stage/README.md"
  tar -C "$stage" -czf "$out/$archive" kubectl-suture README.md
  rm -rf "$stage"
  sum="$(sha256 "$out/$archive")"
  # Fill the sha256 of the platform block whose uri names this archive.
  awk -v archive="$archive" -v sum="$sum" '
    index($0, "uri: ") && index($0, archive) { hit = 1 }
    hit && $1 == "sha256:" { sub(/"[0-9a-f]*"/, "\"" sum "\""); hit = 0 }
    { print }
  ' "$out/krew-manifest.yaml" > "$out/krew-manifest.yaml.new"
  mv "$out/krew-manifest.yaml.new" "$out/krew-manifest.yaml"
  echo "built $out/$archive sha256 $sum"
done
echo "wrote $out/krew-manifest.yaml"
exit "$failed"
