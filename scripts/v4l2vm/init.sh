#!/bin/busybox sh
# PID 1 of the camera test guest: load vivid with two webcams, mount the host's root read-only
# over virtio-9p and the gate's output directory writable, then run the gate's guest script
# (out/guest.sh) chrooted in the host root, so the project's own binary runs unmodified.
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
up() { cut -d' ' -f1 /proc/uptime; }
echo "guest: up at $(up)s, kernel $(uname -r)"
modprobe vivid n_devs=2 node_types=0x1,0x1 input_types=0x0,0x0 num_inputs=1,1 || echo "guest: modprobe vivid FAILED"
echo "guest: vivid loaded at $(up)s: $(ls /dev/video* 2>&1 | tr '\n' ' ')"
if modprobe virtio_pci && modprobe 9pnet_virtio && modprobe 9p \
   && mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144 hostroot /host; then
  mount -t devtmpfs dev /host/dev; mount -t proc proc /host/proc; mount -t sysfs sys /host/sys
  mount -t tmpfs run /host/run; mount -t tmpfs tmp /host/tmp
  mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 hostout /host/mnt
  # The project itself, at its own path: it may live where the guest mounts a fresh tmpfs (/tmp).
  project=$(sed -n 's/.*sharectl_project=\([^ ]*\).*/\1/p' /proc/cmdline)
  if [ -n "$project" ]; then
    mkdir -p "/host$project" 2>/dev/null
    mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144 hostproject "/host$project" \
      || echo "guest: project mount FAILED"
  fi
  cp /bin/vividpoke /host/run/vividpoke
  echo "guest: host root mounted at $(up)s"
  if [ -f /host/mnt/guest.sh ]; then chroot /host /bin/sh /mnt/guest.sh; echo "guest: guest.sh exit $?"; fi
else
  echo "guest: 9p mount FAILED"
fi
echo "guest: done at $(up)s"
sync
poweroff -f
