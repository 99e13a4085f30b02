# syntax=docker/dockerfile:1
# The suture-gateway image `kubectl suture install` names (ghcr.io/suture-dev/suture-gateway:vX.Y.Z):
#   docker build -t ghcr.io/suture-dev/suture-gateway:v0.1.0 .
# The deploy/ manifests run it as user 65532 with a read-only root filesystem and no command
# (the entrypoint is the gateway). Not built by this repository's CI: its machines have no
# container engine.
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
# Profile-guided: an instrumented build answers the repository's recorded reviews on each of its
# scenes, and the gateway is rebuilt with that profile (scripts/pgo-build.sh; python3 and curl
# come with this image, llvm-profdata with rustup's llvm-tools).
RUN rustup component add llvm-tools && scripts/pgo-build.sh --out /src/suture-gateway

# glibc and libgcc (the binary links them dynamically), CA certificates, no shell.
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /src/suture-gateway /usr/local/bin/suture-gateway
USER 65532:65532
EXPOSE 8443 8080
ENTRYPOINT ["/usr/local/bin/suture-gateway"]
