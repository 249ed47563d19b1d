"""osmeter: portable operating-system benchmarks after the classic OS comparison studies."""
__version__ = "0.1.0"
