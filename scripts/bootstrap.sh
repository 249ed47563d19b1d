#!/bin/sh
# Make sure this machine can build and run osmeter: a C compiler, make, Python 3 with venv,
# then a local environment in .venv with osmeter installed (the core built by pip).
# On Debian/Ubuntu as root, missing system packages are installed with apt-get.
set -eu
cd "$(dirname "$0")/.."

need=""
command -v cc >/dev/null 2>&1 || need="$need build-essential"
command -v make >/dev/null 2>&1 || need="$need make"
command -v python3 >/dev/null 2>&1 || need="$need python3"
if command -v python3 >/dev/null 2>&1 && ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    need="$need python3-venv"
fi
if [ -n "$need" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "bootstrap: installing$need" >&2
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need >/dev/null
    else
        echo "bootstrap: osmeter needs:$need (install them, e.g. sudo apt-get install$need)" >&2
        exit 1
    fi
fi

if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null 2>&1 || true
.venv/bin/python -m pip install -q ".${OSMETER_EXTRAS:-}"
