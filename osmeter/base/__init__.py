"""The ground floor: what every other floor may use and which uses nothing of osmeter's.
numbers.py is the one number formatter of every output; text.py carries the system's
bytes that need not be UTF-8 (paths, arguments, the core's output)."""
