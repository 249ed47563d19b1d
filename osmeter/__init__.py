"""osmeter: portable operating-system benchmarks after the classic OS comparison studies.

Scripts import `osmeter.api` (the declared public API); the folders of this package are
drawn in docs/architecture.md."""
__version__ = "0.1.0"
