#!/usr/bin/env bash
# Make Debian's headless Chromium and its matching chromedriver available for the browser test
# (tests/browse). Uses only the distribution's packages: no browser download of its own.
# Never fails the caller: where the packages cannot be had, the browser test skips and says why.
set -uo pipefail
if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "setup_chromium: chromium/chromedriver missing and apt-get unavailable (not root?); browser test will skip" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null 2>&1; then
  apt-get update -qq >/dev/null 2>&1 || true
  apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null 2>&1 \
    || echo "setup_chromium: could not install chromium chromium-driver; browser test will skip" >&2
fi
exit 0
