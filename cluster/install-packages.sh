#!/bin/sh
# Install the cluster profile's servers (Debian packages redis-server and postgresql) when missing.
# Needs root (or sudo); prints why and exits 1 when they cannot be installed, so callers that can
# live without them (the test target) go on and the cluster tests skip with that reason.
set -u
have_postgres() { command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; }
if command -v redis-server >/dev/null 2>&1 && have_postgres && command -v chromium >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" -eq 0 ]; then SUDO=""; elif command -v sudo >/dev/null 2>&1; then SUDO="sudo -n"; else
    echo "cluster: redis-server/postgresql missing and not root: apt-get install redis-server postgresql" >&2
    exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "cluster: redis-server/postgresql missing and no apt-get on this machine" >&2
    exit 1
fi
$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq redis-server postgresql chromium >/dev/null \
    || { echo "cluster: apt-get install redis-server postgresql failed" >&2; exit 1; }
# the Debian packages may start their own default servers; the profile runs its own on free ports
command -v redis-server >/dev/null 2>&1 && have_postgres
