# syntax=docker/dockerfile:1
# The suture-gateway image `kubectl suture install` names (ghcr.io/suture-dev/suture-gateway:vX.Y.Z),
# for those who build with docker:
#   docker build --build-arg REVISION=$(git rev-parse HEAD) -t ghcr.io/suture-dev/suture-gateway:v0.1.0 .
# Without docker, scripts/image.sh builds the same image with buildah from a binary built here (it
# is what the repository's tests build and run). Both copy the root filesystem that
# scripts/image-rootfs.sh assembles — the gateway, the libraries ldd lists, CA certificates,
# /etc/passwd with nonroot 65532, /tmp — onto an empty image, with the same configuration
# (cmd/tests/integration/image.rs checks that the two agree).
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
# Profile-guided: an instrumented build answers the repository's recorded reviews on each of its
# scenes, and the gateway is rebuilt with that profile (scripts/pgo-build.sh; python3 and curl
# come with this image, llvm-profdata with rustup's llvm-tools).
RUN rustup component add llvm-tools && scripts/pgo-build.sh --out /src/suture-gateway
RUN scripts/image-rootfs.sh --binary /src/suture-gateway --rootfs /rootfs

FROM scratch
ARG VERSION=v0.1.0
ARG REVISION=unknown
COPY --from=build /rootfs /
USER 65532:65532
WORKDIR /
EXPOSE 8443/tcp 8080/tcp
STOPSIGNAL SIGTERM
LABEL org.opencontainers.image.source="https://github.com/suture-dev/suture" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.title="suture-gateway" \
      org.opencontainers.image.description="Suture's validating admission webhook: judges operator requests by their impact" \
      org.opencontainers.image.licenses="Apache-2.0"
ENTRYPOINT ["/usr/local/bin/suture-gateway"]
