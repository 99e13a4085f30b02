#!/usr/bin/env bash
# Assembles the suture-gateway image's root filesystem in a directory: the one layout both
# scripts/image.sh (buildah, from scratch) and the Dockerfile (docker, FROM scratch) ship.
#
#   /usr/local/bin/suture-gateway          the gateway (the image's entrypoint)
#   /lib/..., /lib64/ld-linux-*.so.*       the shared libraries `ldd` lists for it (glibc,
#                                          libgcc_s), at the paths the binary looks them up;
#                                          nothing for a static (musl) binary
#   /etc/ssl/certs/ca-certificates.crt     CA certificates (kube's client loads the system roots)
#   /etc/passwd, /etc/group                root and nonroot (65532:65532, no shell), the user
#                                          `kubectl suture install` runs the pod as
#   /etc/nsswitch.conf                     hosts: files dns (glibc's lookups, without NSS modules)
#   /tmp                                   mode 1777 (the gateway writes nothing there: the
#                                          install's read-only root filesystem has no /tmp volume)
#
# No shell, no package manager. Files are root-owned (0:0 in the image) and not writable by
# 65532. Timestamps are set to SOURCE_DATE_EPOCH when it is given.
#
# Usage: scripts/image-rootfs.sh --binary PATH --rootfs DIR [--ca-certs FILE]
#   --binary PATH    the suture-gateway binary (release, PGO or static musl)
#   --rootfs DIR     the directory to fill (created; must be empty or absent)
#   --ca-certs FILE  the CA bundle (default: /etc/ssl/certs/ca-certificates.crt, Debian's
#                    ca-certificates)
set -euo pipefail

binary=""
rootfs=""
ca_certs=/etc/ssl/certs/ca-certificates.crt
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary="$2"; shift 2 ;;
    --rootfs) rootfs="$2"; shift 2 ;;
    --ca-certs) ca_certs="$2"; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "image-rootfs.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -n "$binary" ] && [ -n "$rootfs" ] || { echo "image-rootfs.sh: --binary and --rootfs are required (see --help)" >&2; exit 2; }
[ -x "$binary" ] || { echo "image-rootfs.sh: $binary is not an executable file" >&2; exit 1; }
[ -r "$ca_certs" ] || { echo "image-rootfs.sh: no CA bundle at $ca_certs (apt-get install ca-certificates, or --ca-certs)" >&2; exit 1; }
if [ -e "$rootfs" ] && [ -n "$(ls -A "$rootfs")" ]; then
  echo "image-rootfs.sh: $rootfs is not empty" >&2; exit 1
fi

mkdir -p "$rootfs"/usr/local/bin "$rootfs"/etc/ssl/certs "$rootfs"/tmp
install -m 0755 "$binary" "$rootfs"/usr/local/bin/suture-gateway
install -m 0644 "$ca_certs" "$rootfs"/etc/ssl/certs/ca-certificates.crt
chmod 1777 "$rootfs"/tmp

# The shared libraries, each at the path the dynamic loader resolved it to (the loader itself at
# the interpreter path written in the binary). `ldd` exits 1 on a static binary.
if libs=$(ldd "$binary" 2>/dev/null); then
  printf '%s\n' "$libs" | awk '
    $2 == "=>" && $3 ~ /^\// { print $3; next }
    $1 ~ /^\// { print $1 }
  ' | while read -r lib; do
    mkdir -p "$rootfs$(dirname "$lib")"
    install -m 0755 "$(readlink -f "$lib")" "$rootfs$lib"
  done
elif ! file_out=$(LC_ALL=C ldd "$binary" 2>&1) && ! printf '%s' "$file_out" | grep -q "not a dynamic executable\|statically linked"; then
  echo "image-rootfs.sh: ldd $binary failed: $file_out" >&2; exit 1
fi

cat > "$rootfs"/etc/passwd <<'EOF'
root:x:0:0:root:/root:/sbin/nologin
nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin
EOF
cat > "$rootfs"/etc/group <<'EOF'
root:x:0:
nonroot:x:65532:
EOF
echo "hosts: files dns" > "$rootfs"/etc/nsswitch.conf
chmod 0644 "$rootfs"/etc/passwd "$rootfs"/etc/group "$rootfs"/etc/nsswitch.conf

if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
  find "$rootfs" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
fi
