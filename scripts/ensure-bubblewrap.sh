#!/bin/sh
# The sandbox (docs/adr/0037) runs programs under bubblewrap. `pnpm test`, .ci/run and the start
# scripts (`pnpm start`, `start:api`, `start:worker`; docs/adr/0057) call this first: quiet and
# idempotent — nothing happens when bwrap is already installed. It installs the Debian package
# when it can (root with apt-get); otherwise it says what is missing and exits 0 all the same:
# the tests then fail with the same sentence, and a start goes on without the sandbox and says
# why (`sandbox: unavailable, …`).
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
