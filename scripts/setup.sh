#!/usr/bin/env bash
# Installs what sharectl needs to build, test and run on Debian 12, as root. Idempotent: when
# everything is present it only checks and returns (well under a second for apt; the virtualenv is
# rebuilt only when requirements.txt changes).
#   scripts/setup.sh build   C libraries and build tools
#   scripts/setup.sh test    the above, plus the test peers (Chromium, Python virtualenv, fuzzing)
#   scripts/setup.sh demo    the above
#   scripts/setup.sh bench   the above, plus GStreamer (the benchmark's other side)
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-test}

build_packages=(
    pkg-config gcc libc6-dev make git
    libx264-dev libvpx-dev libavcodec-dev libavutil-dev
    libpipewire-0.3-dev libspa-0.2-dev libdrm-dev
    libnice-dev libglib2.0-dev libsrtp2-dev libopus-dev libssl-dev libsoup-3.0-dev libyuv-dev libsystemd-dev
)
test_packages=(
    chromium python3 python3-venv python3-dev python3-jsonschema iproute2 util-linux nftables coturn
    dbus pipewire pipewire-bin wireplumber sway xdg-desktop-portal xdg-desktop-portal-wlr
    gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-bad
    qemu-system-x86 busybox-static cpio kmod v4l-utils
    zsh systemd
    janus libjs-janus-gateway libjs-webrtc-adapter gdb
)
bench_packages=(
    gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-ugly
    gstreamer1.0-plugins-bad gstreamer1.0-nice python3-gi gir1.2-gstreamer-1.0 gir1.2-gst-plugins-base-1.0
    gir1.2-gst-plugins-bad-1.0 gstreamer1.0-pipewire
)

packages=("${build_packages[@]}")
case "$what" in
    build) ;;
    test|demo|fuzz) packages+=("${test_packages[@]}") ;;
    bench) packages+=("${test_packages[@]}" "${bench_packages[@]}") ;;
    *) echo "setup: unknown target '$what' (build, test, demo, bench or fuzz)" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
if ((${#missing[@]})); then
    if [[ $(id -u) -ne 0 ]]; then
        echo "setup: these Debian packages are missing: ${missing[*]}" >&2
        echo "setup: run as root (or: sudo apt-get install ${missing[*]})" >&2
        exit 1
    fi
    echo "setup: installing ${#missing[@]} Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    # Wait for another apt (a second setup running beside this one) rather than fail.
    apt-get -o DPkg::Lock::Timeout=600 update -q >/dev/null
    apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "${missing[@]}" >/dev/null
    # Debian's janus package starts a system Janus listening on every interface; the gates start
    # their own in a private namespace, so one installed here for them is stopped and disabled.
    if [[ " ${missing[*]} " == *" janus "* && -d /run/systemd/system ]]; then
        systemctl disable --now janus.service >/dev/null 2>&1 || true
        echo "setup: installed janus for the gates and disabled its system service (systemctl enable --now janus to run it)"
    fi
fi

if ! command -v swift >/dev/null 2>&1 && [[ ! -x /opt/swift/usr/bin/swift ]]; then
    echo "setup: no Swift toolchain found (expected 'swift' on PATH or /opt/swift/usr/bin/swift);" >&2
    echo "setup: install Swift 6 for Debian 12 and run this again" >&2
    exit 1
fi

if [[ "$what" != build ]]; then
    # The Python peers live in a project-local virtualenv, rebuilt when requirements.txt changes.
    stamp=.venv/.requirements.sha256
    want=$(sha256sum requirements.txt | cut -d' ' -f1)
    if [[ ! -x .venv/bin/python || "$(cat "$stamp" 2>/dev/null)" != "$want" ]]; then
        echo "setup: preparing the Python virtualenv (.venv) from requirements.txt"
        python3 -m venv .venv
        .venv/bin/pip install -q --disable-pip-version-check -r requirements.txt
        echo "$want" > "$stamp"
    fi
fi

if [[ "$what" == test ]]; then
    # The camera gates boot Debian's kernel with vivid under QEMU. The kernel comes from the archive,
    # so it is fetched here, before the gates enter their network namespace; cached in .build/v4l2vm.
    scripts/v4l2vm/prepare.sh >/dev/null
fi
