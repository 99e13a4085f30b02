#!/usr/bin/env bash
# Builds a release into DIR and lists every artefact with its sha256:
#   kubectl-suture_<v>_<os>_<arch>.tar.gz        one krew archive per platform (the binary and
#                                                README.md)
#   krew-manifest.yaml                           the repository's manifest with each built
#                                                archive's sha256 filled in
#   suture-gateway_<v>_linux_amd64.oci.tar       the gateway's image (scripts/image.sh), named
#   suture-gateway_<v>_linux_amd64.docker.tar    ghcr.io/suture-dev/suture-gateway:<v>, the image
#                                                `kubectl suture install` renders by default
#   kubectl-suture_<v>.cdx.json,                 the SBOMs: CycloneDX 1.5 JSON of each shipped
#   suture-gateway_<v>.cdx.json                  binary's dependency tree (cargo cyclonedx)
#   SHA256SUMS                                   `sha256sum -c SHA256SUMS` checks all of the above
# Before building, `cargo deny check licenses bans sources` (deny.toml) must pass; its advisories
# check needs the RustSec database (a network fetch): it is run too, and said plainly when it
# cannot be reached (a release should not be made without it: see docs/release.md).
#
# Install from it with
#   kubectl krew install --manifest=DIR/krew-manifest.yaml --archive=DIR/<archive>
#   kind load image-archive DIR/suture-gateway_<v>_linux_amd64.docker.tar   (or ctr/docker load)
#
# Usage: scripts/release.sh [--out DIR] [--platforms LIST] [--binary PATH] [--gateway-binary PATH]
#                           [--pgo] [--no-image] [--no-sbom] [--no-deny]
#   --out DIR        where the artefacts go (default: dist)
#   --platforms LIST which krew platforms to build (default: all four in the manifest); each is
#                    `cargo build --release --target <triple>`, so its Rust target (rustup target
#                    add) and a linker for it must be installed — a platform that cannot be built
#                    is reported and its sha256 stays zero (the script exits 1)
#   --binary PATH    package this already-built kubectl-suture for the host platform instead of
#                    building
#   --gateway-binary PATH  put this already-built suture-gateway in the image instead of building
#   --pgo            build the gateway with scripts/pgo-build.sh (as releases should ship it)
#   --no-image       no image (no buildah here, or a quick krew-only run)
#   --no-sbom        no SBOM (cargo-cyclonedx not installed)
#   --no-deny        skip cargo deny (for tests of the packaging only)
set -euo pipefail

cd "$(dirname "$0")/.."
out=dist
platforms="linux/amd64 linux/arm64 darwin/amd64 darwin/arm64"
binary=""
gateway_binary=""
pgo=0
image=1
sbom=1
deny=1
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --platforms) platforms="$2"; shift 2 ;;
    --binary) binary="$2"; shift 2 ;;
    --gateway-binary) gateway_binary="$2"; shift 2 ;;
    --pgo) pgo=1; shift ;;
    --no-image) image=0; shift ;;
    --no-sbom) sbom=0; shift ;;
    --no-deny) deny=0; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
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

sha256sum_() {
  if command -v sha256sum >/dev/null; then sha256sum "$@"; else shasum -a 256 "$@"; fi
}
sha256() { sha256sum_ "$1" | cut -d' ' -f1; }
# File times in the archives and the image: the commit's, so that a rebuild is byte-identical.
# Not exported to cargo: build scripts (cc's) rerun when SOURCE_DATE_EPOCH changes.
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}

failed=0
if [ "$deny" = 1 ]; then
  if ! cargo deny --version >/dev/null 2>&1; then
    echo "release.sh: cargo-deny is needed (cargo install cargo-deny --locked), or --no-deny" >&2
    exit 1
  fi
  cargo deny --log-level error check licenses bans sources
  echo "cargo deny: licenses, bans and sources pass" >&2
  if ! cargo deny --log-level error check advisories >&2; then
    echo "release.sh: cargo deny check advisories FAILED or could not fetch the RustSec advisory" \
      "database (https://github.com/rustsec/advisory-db): the release is built, but not checked" \
      "against known vulnerabilities" >&2
    failed=1
  fi
fi

mkdir -p "$out"
artefacts=()
cp krew-manifest.yaml "$out/krew-manifest.yaml"
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
    # The host's own target builds into target/release, beside the gateway's build for the image.
    target_args=(--target "$target"); target_dir="$target/release"
    if [ "$target" = "$(rustc -vV | sed -n 's/^host: //p')" ]; then target_args=(); target_dir=release; fi
    if ! cargo build --release --locked -p suture-cmd --bin kubectl-suture "${target_args[@]}"; then
      echo "skipped $platform: the build for $target failed (a linker for it?)" >&2; failed=1; continue
    fi
    bin="${CARGO_TARGET_DIR:-target}/$target_dir/kubectl-suture"
  fi
  stage="$(mktemp -d)"
  cp "$bin" "$stage/kubectl-suture"
  cp README.md "$stage/README.md"
  # Reproducible: the same binary and README give the same archive.
  tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" \
    -cf - kubectl-suture README.md | gzip -n > "$out/$archive"
  rm -rf "$stage"
  sum="$(sha256 "$out/$archive")"
  # Fill the sha256 of the platform block whose uri names this archive.
  awk -v archive="$archive" -v sum="$sum" '
    index($0, "uri: ") && index($0, archive) { hit = 1 }
    hit && $1 == "sha256:" { sub(/"[0-9a-f]*"/, "\"" sum "\""); hit = 0 }
    { print }
  ' "$out/krew-manifest.yaml" > "$out/krew-manifest.yaml.new"
  mv "$out/krew-manifest.yaml.new" "$out/krew-manifest.yaml"
  artefacts+=("$archive")
  echo "built $out/$archive sha256 $sum"
done
artefacts+=(krew-manifest.yaml)

if [ "$image" = 1 ]; then
  args=(--out "$out")
  if [ -n "$gateway_binary" ]; then args+=(--binary "$gateway_binary"); elif [ "$pgo" = 1 ]; then args+=(--pgo); fi
  while read -r path; do artefacts+=("$(basename "$path")"); done < <(scripts/image.sh --epoch "$epoch" "${args[@]}")
fi

if [ "$sbom" = 1 ]; then
  if ! cargo cyclonedx --version >/dev/null 2>&1; then
    echo "release.sh: cargo-cyclonedx is needed for the SBOM (cargo install cargo-cyclonedx --locked), or --no-sbom" >&2
    exit 1
  fi
  # One SBOM per shipped binary, each the dependency tree it is built from for Linux (what the
  # image holds; the krew archives of other platforms differ only in platform-specific crates).
  # cargo-cyclonedx writes <binary>_bin.cdx.json beside each package's Cargo.toml.
  SOURCE_DATE_EPOCH=$epoch cargo cyclonedx --manifest-path cmd/Cargo.toml --format json --spec-version 1.5 \
    --describe binaries --target x86_64-unknown-linux-gnu --quiet >&2
  for bin in kubectl-suture suture-gateway; do
    mv "cmd/${bin}_bin.cdx.json" "$out/${bin}_${version}.cdx.json"
    artefacts+=("${bin}_${version}.cdx.json")
  done
  rm -f ./*/*_bin.cdx.json
fi

(cd "$out" && sha256sum_ "${artefacts[@]}" > SHA256SUMS)
echo "wrote $out/SHA256SUMS:"
cat "$out/SHA256SUMS"
exit "$failed"
