"""The core built with AddressSanitizer and UndefinedBehaviorSanitizer (`make -C core
sanitize`, in core/build-san/), for the tests that feed it hostile input, and how to
recognise a sanitizer's report in what it wrote on stderr.

The build aborts at the first report (-fno-sanitize-recover=all), so a memory error in
a connection's process shows up twice: as a report on stderr and as that process dying
of a signal, which the peer and the HTTP server log too.
"""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BUILD = REPO / "core" / "build-san"
REPORT = re.compile(r"ERROR: (Address|Leak)Sanitizer|UndefinedBehaviorSanitizer|"
                    r"runtime error:|SUMMARY: \w+Sanitizer")

# Reports go to stderr with a stack; UBSan stops at the first error like ASan does.
ENV = {"ASAN_OPTIONS": "abort_on_error=0:halt_on_error=1:detect_stack_use_after_return=1",
       "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1"}


def build() -> tuple[Path | None, str]:
    """(path of the sanitized osmeter-core, "") or (None, why it cannot be built)."""
    r = subprocess.run(["make", "-s", "-C", str(REPO / "core"), "sanitize"],
                       capture_output=True, text=True)
    core = BUILD / "osmeter-core"
    if r.returncode != 0 or not core.exists():
        last = (r.stderr.strip() or r.stdout.strip() or "no output").splitlines()[-1]
        return None, "cannot build the sanitizer variant of the core: %s" % last
    # A compiler that accepts the flags but whose runtime cannot start here.
    r = subprocess.run([str(core), "version"], capture_output=True, text=True,
                       env=dict(os.environ, **ENV))
    if r.returncode != 0:
        return None, "the sanitizer build does not run here: %s" % r.stderr.strip()[-300:]
    return core, ""


def reports(text: str) -> list[str]:
    """The lines of text that are (the start of) a sanitizer report."""
    return [line for line in text.splitlines() if REPORT.search(line)]
