"""Running the osmeter CLI as a user would, in a subprocess."""
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def osmeter(*args, db=None, check=None, timeout=300, env=None, **kw):
    e = dict(os.environ)
    e["PYTHONPATH"] = str(REPO) + os.pathsep + e.get("PYTHONPATH", "")
    # A terminal of 100 columns, whatever ran pytest (a terminal, CI, an xdist worker):
    # the wrapping of what the tests read does not depend on where they ran.
    e["COLUMNS"] = "100"
    if db is not None:
        e["OSMETER_DB"] = str(db)
    if env:
        e.update(env)
    r = subprocess.run([sys.executable, "-m", "osmeter", *map(str, args)], capture_output=True,
                       text=True, timeout=timeout, env=e, **kw)
    if check is not None:
        assert r.returncode == check, "exit %d\nstdout:\n%s\nstderr:\n%s" % (
            r.returncode, r.stdout, r.stderr)
    return r


def labelled_runs(db, benches, labels, *options, timeout=900):
    """One real run of `benches` per label into store `db`, one after the other, with
    `options` (a preset, repetitions); each must succeed."""
    for label in labels:
        osmeter("run", *benches, *options, "--label", label, "--quiet", db=db, check=0,
                timeout=timeout)
