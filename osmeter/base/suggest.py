"""'did you mean' for a mistyped name: a command, a suite, a benchmark id."""
from __future__ import annotations

import difflib
import re


def did_you_mean(word: str, choices) -> str:
    """" (did you mean 'compare'?)" when a choice is close to word (difflib), else ''."""
    close = difflib.get_close_matches(word, list(choices), n=2, cutoff=0.75)
    if not close:
        return ""
    return " (did you mean %s?)" % " or ".join("'%s'" % c for c in close)


def invalid_choice(message: str) -> str:
    """argparse's "argument COMMAND: invalid choice: 'compar' (choose from 'list', ...)"
    with the closest choices named, or the message as it was."""
    m = re.match(r"(argument (\S+): invalid choice: '([^']*)') \(choose from (.*)\)$",
                 message)
    if not m:
        return message
    choices = [c.strip().strip("'") for c in m.group(4).split(",")]
    hint = did_you_mean(m.group(3), choices)
    if m.group(2) == "COMMAND":
        return "unknown command '%s'%s" % (m.group(3), hint)
    return m.group(1) + (hint or " (choose from %s)" % ", ".join(choices))
