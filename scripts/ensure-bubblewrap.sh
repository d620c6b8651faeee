#!/bin/sh
# The sandbox (docs/adr/0037) runs programs under bubblewrap. `pnpm test` and .ci/run call this
# first: quiet and idempotent — nothing happens when bwrap is already installed. It installs
# the Debian package when it can (root with apt-get); otherwise it says what is missing and
# leaves the decision to the tests, which then fail with the same sentence.
command -v bwrap >/dev/null 2>&1 && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "setup: installing bubblewrap (the sandbox, docs/adr/0037)"
  export DEBIAN_FRONTEND=noninteractive
  if apt-get install -y -qq bubblewrap >/dev/null 2>&1 ||
    { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq bubblewrap >/dev/null 2>&1; }; then
    exit 0
  fi
fi
echo "setup: bubblewrap (bwrap) is missing and could not be installed here; run: sudo apt-get install -y bubblewrap" >&2
exit 0
