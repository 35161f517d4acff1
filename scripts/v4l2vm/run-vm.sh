#!/bin/bash
# Boots the camera test VM (prepare.sh first) under QEMU's software emulation (TCG: this host's
# /dev/kvm cannot run a stock kernel) with the host root shared read-only, the project at its own
# path (read-only, so it is there even under the guest's fresh /tmp) and OUT_DIR writable; the
# guest runs OUT_DIR/guest.sh chrooted in the host root and powers off. Console on stdout.
#   run-vm.sh OUT_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(cd "${1:?usage: run-vm.sh OUT_DIR}" && pwd)
eval "$("$here/prepare.sh" | grep -E '^(CACHE|KROOT|K)=')"
project=$(cd "$here/../.." && pwd)
exec timeout "${VM_TIMEOUT:-240}" qemu-system-x86_64 -accel tcg -cpu max -smp 1 -m "${VM_MEM:-1024}" \
    -nographic -no-reboot -nic none \
    -kernel "$KROOT/boot/vmlinuz-$K" -initrd "$CACHE/initramfs.cpio.gz" \
    -append "console=ttyS0 quiet panic=-1 sharectl_project=$project" \
    -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
    -virtfs "local,path=$out,mount_tag=hostout,security_model=none" \
    -virtfs "local,path=$project,mount_tag=hostproject,security_model=none,readonly=on,multidevs=remap"
