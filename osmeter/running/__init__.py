"""Making a run: the catalogue the core declares (catalog.py), the plan (plan.py, suite
files, the user's command), what the plan needs from this machine (needs.py,
preflight.py), the core as a process (coreproc.py), the runner with its ETA, and keeping
a run that the store could not take (safekeeping.py)."""
