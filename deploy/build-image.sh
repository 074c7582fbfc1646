#!/usr/bin/env bash
# Builds the runtime image of deploy/Containerfile from a built tusk binary:
#   deploy/build-image.sh [TUSK_BINARY] [IMAGE_TAG]
# (defaults: target/release/tusk, localhost/tusk:latest). Uses buildah, else podman.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-target/release/tusk}")
tag=${2:-localhost/tusk:latest}
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
mkdir -p "$ctx/rootfs/usr/local/bin" "$ctx/rootfs/tmp" "$ctx/conf" \
    "$ctx/state/tmp" "$ctx/state/name" "$ctx/state/data" "$ctx/state/rmstore" "$ctx/state/nm-local"
chmod 1777 "$ctx/rootfs/tmp"
cp "$bin" "$ctx/rootfs/usr/local/bin/tusk"
# Every library the dynamic loader resolves for the binary, and the loader itself.
for lib in $(ldd "$bin" | awk '/=>/ { print $3 } /ld-linux/ && !/=>/ { print $1 }'); do
    mkdir -p "$ctx/rootfs$(dirname "$lib")"
    cp -L "$lib" "$ctx/rootfs$lib"
done
cp deploy/conf/*.xml "$ctx/conf/"
if command -v buildah >/dev/null; then
    buildah bud --isolation chroot -f "$PWD/deploy/Containerfile" -t "$tag" "$ctx"
else
    podman build -f "$PWD/deploy/Containerfile" -t "$tag" "$ctx"
fi
