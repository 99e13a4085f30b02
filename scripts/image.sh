#!/usr/bin/env bash
# Builds the suture-gateway OCI image with buildah, from scratch (no base image is pulled: the
# root filesystem is scripts/image-rootfs.sh's, the same the Dockerfile copies), and writes it as
#   DIR/suture-gateway_<version>_linux_amd64.oci.tar     oci-archive: `ctr -n k8s.io images import`,
#                                                         `skopeo copy oci-archive:... docker://...`
#   DIR/suture-gateway_<version>_linux_amd64.docker.tar  docker-archive: `docker load -i`,
#                                                         `kind load image-archive`, `ctr images import`
# and leaves it in the local containers storage (`podman run <image>`).
#
# The image: entrypoint /usr/local/bin/suture-gateway (no command: `kubectl suture install`
# passes the arguments), user 65532:65532, ports 8443 (webhook) and 8080 (health, metrics),
# stop signal SIGTERM (the gateway drains), OCI labels org.opencontainers.image.{source,
# version,revision,created,title,description,licenses}. With the same binary and commit the
# image is the same, byte for byte: file and creation times are the commit's time.
#
# Usage: scripts/image.sh [--binary PATH | --pgo | --musl] [--out DIR] [--image NAME:TAG]
#   --binary PATH   package this suture-gateway binary (e.g. a debug build, for a test)
#   --pgo           build it with scripts/pgo-build.sh (what releases ship; several minutes)
#   --musl          build it statically for x86_64-unknown-linux-musl (rustup target add
#                   x86_64-unknown-linux-musl; Debian's musl-tools for the C parts): no shared
#                   libraries in the image
#                   (default: cargo build --release --locked -p suture-cmd --bin suture-gateway)
#   --out DIR       where the two archives go (default: dist)
#   --image REF     the image's name (default: ghcr.io/suture-dev/suture-gateway:v<version>,
#                   the image `kubectl suture install` names)
#   --no-archives   only build the image into the local storage
#   --print-ref     print the image's name (as --image would set it) and exit
#   --epoch SECONDS file times and the creation time (default: SOURCE_DATE_EPOCH, else the
#                   commit's time)
# CARGO_TARGET_DIR is honoured. Needs buildah (Debian: apt-get install buildah).
set -euo pipefail

cd "$(dirname "$0")/.."
root=$(pwd)
binary=""
mode=release
out=dist
image=""
archives=1
print_ref=0
epoch=""
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary="$2"; shift 2 ;;
    --pgo) mode=pgo; shift ;;
    --musl) mode=musl; shift ;;
    --out) out="$2"; shift 2 ;;
    --image) image="$2"; shift 2 ;;
    --no-archives) archives=0; shift ;;
    --print-ref) print_ref=1; shift ;;
    --epoch) epoch="$2"; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "image.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

version="v$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)"
image=${image:-ghcr.io/suture-dev/suture-gateway:$version}
if [ "$print_ref" = 1 ]; then echo "$image"; exit 0; fi
command -v buildah >/dev/null || { echo "image.sh: buildah is needed (apt-get install buildah)" >&2; exit 1; }
revision=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)
if [ "$revision" != unknown ] && [ -n "$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
  revision="$revision-dirty"
fi
# Not exported: build scripts (cc's) rerun when SOURCE_DATE_EPOCH changes, rebuilding C code.
epoch=${epoch:-${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || date +%s)}}
created=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)
target=$(realpath -m "${CARGO_TARGET_DIR:-$root/target}")

if [ -z "$binary" ]; then
  case "$mode" in
    release)
      cargo build --release --locked -p suture-cmd --bin suture-gateway >&2
      binary="$target/release/suture-gateway" ;;
    pgo)
      binary="$target/pgo/suture-gateway"
      scripts/pgo-build.sh --out "$binary" >&2 ;;
    musl)
      cargo build --release --locked -p suture-cmd --bin suture-gateway --target x86_64-unknown-linux-musl >&2
      binary="$target/x86_64-unknown-linux-musl/release/suture-gateway" ;;
  esac
fi
binary=$(realpath "$binary")

work=$(mktemp -d "${TMPDIR:-/tmp}/suture-image.XXXXXX")
ctr=""
cleanup() {
  [ -n "$ctr" ] && buildah rm "$ctr" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

SOURCE_DATE_EPOCH=$epoch scripts/image-rootfs.sh --binary "$binary" --rootfs "$work/rootfs"

ctr=$(buildah from --format oci scratch)
buildah copy --quiet --chown 0:0 "$ctr" "$work/rootfs/" / >/dev/null
buildah config \
  --os linux --arch amd64 \
  --entrypoint '["/usr/local/bin/suture-gateway"]' --cmd '' \
  --user 65532:65532 --workingdir / \
  --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --port 8443/tcp --port 8080/tcp \
  --stop-signal SIGTERM \
  --label org.opencontainers.image.source=https://github.com/suture-dev/suture \
  --label "org.opencontainers.image.version=$version" \
  --label "org.opencontainers.image.revision=$revision" \
  --label "org.opencontainers.image.created=$created" \
  --label org.opencontainers.image.title=suture-gateway \
  --label "org.opencontainers.image.description=Suture's validating admission webhook: judges operator requests by their impact" \
  --label org.opencontainers.image.licenses=Apache-2.0 \
  "$ctr"
id=$(buildah commit --quiet --timestamp "$epoch" --rm "$ctr" "$image")
ctr=""
echo "built $image ($id) from $binary, revision $revision" >&2

if [ "$archives" = 1 ]; then
  mkdir -p "$out"
  base="$out/suture-gateway_${version}_linux_amd64"
  rm -f "$base.oci.tar" "$base.docker.tar"
  buildah push --quiet "$image" "oci-archive:$work/oci.tar:$image" >/dev/null
  # buildah stamps the archive's own entries with the time of writing: repack them with the
  # epoch, so the archive (not only the image digest inside it) is the same on a rebuild.
  mkdir "$work/oci" && tar -C "$work/oci" -xf "$work/oci.tar"
  tar -C "$work/oci" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" \
    -cf "$base.oci.tar" oci-layout index.json blobs
  buildah push --quiet "$image" "docker-archive:$base.docker.tar:$image" >/dev/null
  echo "$base.oci.tar"
  echo "$base.docker.tar"
fi
