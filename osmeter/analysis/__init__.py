"""What results mean, computed once and written by nobody here: results from samples
(results.py, each family's own in families/), flags (flags.py, monitor.py, precision.py),
curves, comparisons (compare.py), the regression gate (gate.py), between-run noise,
history, fleets, adaptive stopping, the remote penalty and matching a run to a published
number.  Nothing in this folder prints."""
