"""The binomial bound the real-run tests judge a claimed rate with."""
import math


def most_explained(trials: int, rate: float, level: float) -> int:
    """The most successes of `trials` that a rate of `rate` explains: one more has a
    binomial upper tail of at most `level`."""
    def tail(k):
        return sum(math.comb(trials, i) * rate ** i * (1 - rate) ** (trials - i)
                   for i in range(k, trials + 1))
    return next(k for k in range(trials + 1) if tail(k + 1) <= level)
