#!/bin/sh
# Make sure this machine can build and run osmeter: a C compiler, make, Python 3 with venv,
# then a local environment in .venv with osmeter installed (the core built by pip).
# On Debian/Ubuntu as root, missing system packages are installed with apt-get.
# The install is skipped when nothing it is made from changed since the last one (a
# stamp in .venv holds the hash of the sources and the Python, and the extras installed;
# an install with more extras than asked for will do).
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

started=$(date +%s)
say() { echo "bootstrap [$(( $(date +%s) - started )) s]: $*" >&2; }
if [ ! -x .venv/bin/python ]; then
    say "creating the virtual environment .venv"
    python3 -m venv .venv
fi
# The extras asked for ("[test]" for ./run-tests, none for ./run-benchmarks); an install
# that already has them (or more) will do: the two commands share one .venv.
extras=$(echo "${OSMETER_EXTRAS:-}" | tr -d '[] ')
stamp=.venv/.osmeter-install-stamp
# What the install is made from: the package, the core's sources, the build files and
# the Python; the stamp's second line names the extras installed with it.
sources_hash=$(.venv/bin/python - <<'EOF'
import hashlib, os, sys
h = hashlib.sha256(sys.version.encode())
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
installed_hash=$(sed -n 1p "$stamp" 2>/dev/null || true)
installed_extras=$(sed -n 2p "$stamp" 2>/dev/null || true)
missing=""
for e in $(echo "$extras" | tr ',' ' '); do
    case ",$installed_extras," in *",$e,"*) ;; *) missing="$missing,$e" ;; esac
done
missing=${missing#,}
all_extras=$(echo "$installed_extras,$extras" | tr ',' '\n' | sed '/^$/d' | sort -u | paste -sd, -)
if [ -x .venv/bin/osmeter ] && [ "$installed_hash" = "$sources_hash" ]; then
    if [ -z "$missing" ]; then
        echo "bootstrap: osmeter in .venv is up to date (nothing changed since it was installed)" >&2
        exit 0
    fi
    # Only the extras' own packages are missing: install those, not osmeter again.
    say "installing the packages of the extra(s) $missing into .venv (pip)"
    if reqs=$(.venv/bin/python - "$missing" <<'EOF'
import sys
try:
    import tomllib
except ImportError:         # Python < 3.11: the whole install below does it
    sys.exit(1)
with open("pyproject.toml", "rb") as f:
    extras = tomllib.load(f)["project"]["optional-dependencies"]
print("\n".join(r for e in sys.argv[1].split(",") for r in extras[e]))
EOF
    ) && { [ -z "$reqs" ] || echo "$reqs" | tr '\n' '\0' | xargs -0 .venv/bin/python -m pip install -q; }; then
        printf '%s\n%s\n' "$sources_hash" "$all_extras" > "$stamp"
        say "done"
        exit 0
    fi
fi
say "updating pip in .venv"
.venv/bin/python -m pip install -q --upgrade pip >/dev/null 2>&1 || true
say "installing osmeter${all_extras:+ with [$all_extras]} into .venv (pip builds the C core with cc)"
.venv/bin/python -m pip install -q ".${all_extras:+[$all_extras]}"
printf '%s\n%s\n' "$sources_hash" "$all_extras" > "$stamp"
say "osmeter installed in .venv"
