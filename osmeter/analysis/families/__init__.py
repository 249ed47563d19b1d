"""Per-family analyses: each module may define derive(bench_id, results, sysinfo)."""
