#!/bin/sh
# The operator console's browser tests (docs/adr/0047) drive Debian's chromium through
# playwright-core. `pnpm test` and .ci/run call this first, like ensure-bubblewrap.sh: quiet and
# idempotent — nothing happens when /usr/bin/chromium is there. It installs the Debian package
# when it can (root with apt-get); otherwise it says what is missing, and the browser test then
# fails with the same sentence (never skipped).
[ -x /usr/bin/chromium ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "setup: installing chromium (the console's browser tests, docs/adr/0047)"
  export DEBIAN_FRONTEND=noninteractive
  if apt-get install -y -qq chromium >/dev/null 2>&1 ||
    { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq chromium >/dev/null 2>&1; }; then
    exit 0
  fi
fi
echo "setup: chromium (/usr/bin/chromium) is missing and could not be installed here; run: sudo apt-get install -y chromium" >&2
exit 0
