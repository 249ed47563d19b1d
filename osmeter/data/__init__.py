"""What osmeter keeps and reads: the model of a run (model.py), the results file and its
JSON Schema (exchange.py, schema.py, results.schema.json), the results store (store/),
what a shared run leaves out (redact.py), the studies' published numbers (references.py,
seed-results.toml), the core's note keys (note_keys.py), selecting stored runs
(selection.py) and every file osmeter writes (writes.py)."""
