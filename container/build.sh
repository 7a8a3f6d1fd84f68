#!/bin/sh
# snnbench's image without an image registry (docs/container.md): a Debian 12 root file system from Debian's
# packages (debootstrap, as root), imported with `podman import` as localhost/snnbench-base:bookworm; then
# container/Containerfile built on it as localhost/snnbench:<version>, saved as a docker-archive for Apptainer
# (`apptainer build snnbench-<version>.sif docker-archive://snnbench-image.tar`). Run from the checkout's root.
#   OUT       where the root file system and snnbench-image.tar go (default /var/tmp/snnbench-image)
#   MIRROR    Debian's mirror (default http://deb.debian.org/debian)
#   CA_BUNDLE the CA certificates pip trusts inside the build (default the host's, for a TLS-inspecting proxy)
#   PODMAN    podman and its global options, e.g. "podman --runtime runc" where crun refuses this host's cgroups
#   BUILD_OPTIONS more options of podman build, e.g. "--ulimit nofile=1024:1024 --ulimit nproc=1024:1024"
set -eu
OUT=${OUT:-/var/tmp/snnbench-image}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
CA_BUNDLE=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
PODMAN=${PODMAN:-podman}
VERSION=$(sed -n 's/^version = "\(.*\)"$/\1/p' pyproject.toml)
mkdir -p "$OUT"
if ! $PODMAN image exists localhost/snnbench-base:bookworm; then
  rm -rf "$OUT/rootfs"
  debootstrap --variant=minbase bookworm "$OUT/rootfs" "$MIRROR"
  tar -C "$OUT/rootfs" -c . | $PODMAN import --change 'CMD ["/bin/bash"]' - localhost/snnbench-base:bookworm
fi
# shellcheck disable=SC2086 # BUILD_OPTIONS are words
$PODMAN build ${BUILD_OPTIONS:-} --secret "id=ca-bundle,src=$CA_BUNDLE" --file container/Containerfile \
  --tag "localhost/snnbench:$VERSION" .
rm -f "$OUT/snnbench-image.tar"
$PODMAN save --format docker-archive --output "$OUT/snnbench-image.tar" "localhost/snnbench:$VERSION"
echo "localhost/snnbench:$VERSION; $OUT/snnbench-image.tar ($(du -h "$OUT/snnbench-image.tar" | cut -f1))"
