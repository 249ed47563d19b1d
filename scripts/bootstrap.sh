#!/bin/sh
# Make sure this machine can build and run osmeter: a C compiler, make, Python 3 with venv,
# then a local environment in .venv with osmeter installed (the core built by pip).
# On Debian/Ubuntu as root, missing system packages are installed with apt-get.
# The install is skipped when nothing it is made from changed since the last one (a
# stamp in .venv holds the hash of the sources, the extras and the Python).
set -eu
cd "$(dirname "$0")/.."

need=""
command -v cc >/dev/null 2>&1 || need="$need build-essential"
# GNU make: gmake on the BSDs, where make is BSD make (setup.py takes gmake first)
command -v gmake >/dev/null 2>&1 || make --version 2>/dev/null | grep -q "GNU Make" ||
    need="$need make"
command -v python3 >/dev/null 2>&1 || need="$need python3"
if command -v python3 >/dev/null 2>&1 && ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    need="$need python3-venv"
fi
if [ -n "$need" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "bootstrap: installing$need" >&2
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need >/dev/null
    else
        echo "bootstrap: osmeter needs:$need (install them, e.g. sudo apt-get install$need;" \
             "on a BSD, make means GNU make: pkg install gmake)" >&2
        exit 1
    fi
fi

if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
extras="${OSMETER_EXTRAS:-}"
stamp=.venv/.osmeter-install-stamp
# What the install is made from: the package, the core's sources, the build files.
sources_hash=$(.venv/bin/python - "$extras" <<'EOF'
import hashlib, os, sys
h = hashlib.sha256(("%s|%s" % (sys.argv[1], sys.version)).encode())
for top in ("osmeter", "core", "setup.py", "pyproject.toml"):
    paths = [top] if os.path.isfile(top) else sorted(
        os.path.join(d, f) for d, dirs, files in os.walk(top)
        if not d.startswith(("core/build", "core/tests")) and "__pycache__" not in d
        for f in files)
    for p in paths:
        h.update(p.encode())
        with open(p, "rb") as f:
            h.update(f.read())
print(h.hexdigest())
EOF
)
if [ -x .venv/bin/osmeter ] && [ "$(cat "$stamp" 2>/dev/null)" = "$sources_hash" ]; then
    echo "bootstrap: osmeter in .venv is up to date (nothing changed since it was installed)" >&2
    exit 0
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null 2>&1 || true
.venv/bin/python -m pip install -q ".$extras"
echo "$sources_hash" > "$stamp"
