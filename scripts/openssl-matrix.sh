#!/usr/bin/env bash
# Runs the DTLS tests (real OpenSSL on both sides) against every OpenSSL 3.0.x the Debian archive
# offers, then puts back the version that was installed. The test binary is built once: libssl3 is
# a shared library, so each run uses the version installed at that moment. As root.
#   scripts/openssl-matrix.sh            every version apt-cache knows
#   scripts/openssl-matrix.sh 3.0.17-1~deb12u2 3.0.22-1~deb12u2
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/opt/swift/usr/bin:$PATH DEBIAN_FRONTEND=noninteractive
[[ $(id -u) -eq 0 ]] || { echo "openssl-matrix: run as root (it installs libssl3 versions)" >&2; exit 1; }
installed=$(dpkg-query -W -f='${Version}' libssl3)
if (($#)); then versions=("$@"); else
    mapfile -t versions < <(apt-cache madison libssl3 | awk '{print $3}' | sort -uV)
fi
swift build --build-tests 2>&1 | scripts/swift-output.sh
pin() { apt-get -o DPkg::Lock::Timeout=600 install -y -q --allow-downgrades --no-install-recommends \
            "libssl3=$1" "libssl-dev=$1" "openssl=$1" >/dev/null 2>&1; }
restore() {
    if pin "$installed"; then echo "openssl-matrix: libssl3 $installed put back"
    else echo "openssl-matrix: libssl3 $installed is not in the archive any more; $(dpkg-query -W -f='${Version}' libssl3) stays installed" >&2; fi
}
trap restore EXIT
failed=0
for v in "${versions[@]}"; do
    if ! pin "$v"; then echo "openssl-matrix: $v cannot be installed, skipped"; continue; fi
    got=$(.build/debug/sharectl version 2>/dev/null | grep -i openssl || true)
    if swift test --skip-build --filter 'DTLS|OpenSSL' > ".build/openssl-$v.log" 2>&1; then
        echo "openssl-matrix: $v passed ($(grep -oE 'with [0-9]+ tests' ".build/openssl-$v.log" | tail -1)) ${got}"
    else
        echo "openssl-matrix: $v FAILED — see .build/openssl-$v.log"; grep -E '✘' ".build/openssl-$v.log" | head -5; failed=1
    fi
done
exit $failed
