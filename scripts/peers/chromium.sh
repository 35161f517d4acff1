#!/usr/bin/env bash
# Starts headless Chromium on a page (the browser peer of the gates) and waits for it.
#   scripts/peers/chromium.sh URL [PROFILE_DIR]
# --allow-loopback-in-peer-connection is required where only loopback exists (without it Chromium
# gathers no candidate on lo); --no-sandbox because the gates run as root.
set -euo pipefail
url=$1
profile=${2:-$(mktemp -d /tmp/sharectl-chromium.XXXXXX)}
exec chromium --headless=new --no-sandbox --no-first-run --disable-gpu --mute-audio \
    --user-data-dir="$profile" --use-fake-ui-for-media-stream --use-fake-device-for-media-stream \
    --autoplay-policy=no-user-gesture-required --allow-loopback-in-peer-connection \
    --disable-background-timer-throttling --disable-renderer-backgrounding \
    "$url"
