#!/bin/bash
# Prepares the camera test VM in a cache directory (default .build/v4l2vm): Debian's 6.1 kernel,
# unpacked from its package (apt-get download), and a busybox initramfs with vivid, virtio-9p and
# vividpoke. A second run finds both and returns at once; the initramfs is rebuilt when init.sh or
# vividpoke.c change. Needs: apt (Debian 12), busybox-static, cpio, gcc, kmod, python3.
# Prints the cache directory's KEY=VALUE lines (KROOT, K) on its last lines.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${V4L2VM_CACHE:-$here/../../.build/v4l2vm}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)

# The kernel: the newest linux-image-6.1.0-N-amd64 the archive offers, unpacked once.
if [[ ! -f $cache/kernel.env ]]; then
    package=$(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64$' | cut -d' ' -f1 | sort -V | tail -1)
    [[ -n $package ]] || { echo "v4l2vm: apt knows no linux-image-6.1.0-*-amd64 (apt-get update?)" >&2; exit 1; }
    echo "v4l2vm: downloading $package" >&2
    rm -rf "$cache/kroot" "$cache"/*.deb
    (cd "$cache" && apt-get download -q "$package" >/dev/null 2>&1 || apt-get download "$package")
    dpkg-deb -x "$cache"/"$package"_*.deb "$cache/kroot"
    rm -f "$cache"/*.deb
    K=${package#linux-image-}
    depmod -b "$cache/kroot" "$K"
    printf 'KROOT=%s\nK=%s\n' "$cache/kroot" "$K" > "$cache/kernel.env"
fi
source "$cache/kernel.env"

# The initramfs, rebuilt when its inputs change.
stamp=$(cat "$here/init.sh" "$here/vividpoke.c" "$here/prepare.sh" | sha256sum | cut -d' ' -f1)
if [[ ! -f $cache/initramfs.cpio.gz || "$(cat "$cache/initramfs.stamp" 2>/dev/null)" != "$stamp" ]]; then
    R=$(mktemp -d); trap 'rm -rf "$R"' EXIT
    mkdir -p "$R"/{bin,dev,proc,sys,tmp,host,lib/modules/$K}
    cp /bin/busybox "$R/bin/busybox"
    gcc -O2 -static -o "$R/bin/vividpoke" "$here/vividpoke.c"
    cp "$KROOT/lib/modules/$K"/modules.{dep,alias,symbols,builtin,order,builtin.modinfo} "$R/lib/modules/$K/" 2>/dev/null || true
    python3 - "$KROOT/lib/modules/$K" "$R/lib/modules/$K" vivid 9p 9pnet_virtio virtio_pci <<'PY'
import os, shutil, sys
base, out, want = sys.argv[1], sys.argv[2], sys.argv[3:]
dep = {}
for line in open(os.path.join(base, "modules.dep")):
    module, needs = line.split(":", 1)
    dep[module] = needs.split()
byname = {os.path.basename(m).split(".ko")[0].replace("-", "_"): m for m in dep}
todo, seen = [byname[w] for w in want], set()
while todo:
    m = todo.pop()
    if m not in seen:
        seen.add(m)
        todo += dep[m]
for m in seen:
    os.makedirs(os.path.dirname(os.path.join(out, m)), exist_ok=True)
    shutil.copy(os.path.join(base, m), os.path.join(out, m))
print(f"v4l2vm: {len(seen)} modules in the initramfs", file=sys.stderr)
PY
    install -m 755 "$here/init.sh" "$R/init"
    (cd "$R" && find . | cpio -o -H newc --quiet | gzip -1) > "$cache/initramfs.cpio.gz"
    echo "$stamp" > "$cache/initramfs.stamp"
fi
echo "CACHE=$cache"
cat "$cache/kernel.env"
