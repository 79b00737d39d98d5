#!/usr/bin/env bash
# Make Debian's PostgreSQL server binaries available for the PostgreSQL tests.
#
# The tests start their own throw-away server (initdb in a temporary directory, Unix socket
# only); this script only makes sure `initdb` and `postgres` exist. It installs the `postgresql`
# package with apt-get when they are missing and this is a root shell on Debian. Where that is
# impossible it prints one loud line and exits 0: the PostgreSQL tests are then skipped and the
# test summary says so.
set -uo pipefail

loud() { echo "=== POSTGRESQL: $* ===" >&2; }

find_bindir() {
  local d
  if command -v initdb >/dev/null 2>&1 && command -v postgres >/dev/null 2>&1; then
    dirname "$(command -v initdb)"; return 0
  fi
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$d/initdb" ] && [ -x "$d/postgres" ]; then echo "$d"; return 0; fi
  done
  return 1
}

if bindir="$(find_bindir)"; then
  echo "postgresql: server binaries in $bindir" >&2
  exit 0
fi
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
  loud "server binaries not found and cannot install them here (need root and apt-get); PostgreSQL tests will be SKIPPED"
  exit 0
fi
echo "postgresql: installing Debian's postgresql package" >&2
if ! DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null 2>&1; then
  loud "apt-get update failed; PostgreSQL tests will be SKIPPED"
  exit 0
fi
if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null 2>&1; then
  loud "apt-get install postgresql failed; PostgreSQL tests will be SKIPPED"
  exit 0
fi
if bindir="$(find_bindir)"; then
  echo "postgresql: installed, server binaries in $bindir" >&2
else
  loud "postgresql installed but initdb/postgres not found; PostgreSQL tests will be SKIPPED"
fi
exit 0
