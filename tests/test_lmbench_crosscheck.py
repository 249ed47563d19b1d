"""The interval bench/lmbench_crosscheck.py prints beside each ratio: the distribution-free
interval of the median of the rounds' ratios holds at its stated 95% (exactly, and by
simulation with a fixed seed on a skewed distribution), and is the narrowest that does."""
import importlib.util
import json
import math
import pathlib
import random
import statistics

import pytest

SCRIPT = pathlib.Path(__file__).resolve().parent.parent / "bench" / "lmbench_crosscheck.py"


@pytest.fixture(scope="module")
def crosscheck():
    spec = importlib.util.spec_from_file_location("lmbench_crosscheck", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def coverage(n, k):
    """P(x(k) <= median <= x(n+1-k)) for n independent draws of a continuous variable."""
    return 1 - 2 * sum(math.comb(n, j) for j in range(k)) / 2 ** n


@pytest.mark.parametrize("n", range(6, 41))
def test_the_interval_is_the_narrowest_order_statistic_pair_at_95_percent(crosscheck, n):
    lo, hi = crosscheck.median_interval(list(range(1, n + 1)))
    assert hi == n + 1 - lo
    assert coverage(n, lo) >= 0.95
    assert coverage(n, lo + 1) < 0.95  # one step narrower would not hold


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_too_few_rounds_give_no_interval(crosscheck, n):
    assert crosscheck.median_interval([1.0] * n) is None


def test_the_interval_covers_the_median_at_its_level_by_simulation(crosscheck):
    # 20 rounds from a skewed law with a known median (0.9 + 0.1 x exponential: a few
    # rounds far off, as the split-CPU bandwidths have): covered in 95.9% of runs, exactly
    rng = random.Random(30)
    median = 0.9 + 0.1 * math.log(2)
    trials, covered = 4000, 0
    for _ in range(trials):
        lo, hi = crosscheck.median_interval([0.9 + 0.1 * rng.expovariate(1) for _ in range(20)])
        covered += lo <= median <= hi
    assert 0.945 <= covered / trials <= 0.972  # 0.9586 +- 4 standard errors


# The per-round ratios osmeter/lmbench of the split-CPU pairs in three 10-round runs on this
# 2-CPU VM (2026-11-26, logs of issue 30's stop 36): the noisiest pairs the script has
SPLIT_PIPE_RATIOS = [0.968, 0.937, 0.900, 1.117, 0.980, 0.959, 1.114, 0.947, 0.988, 0.950,
                     1.075, 1.103, 1.015, 0.942, 1.105, 0.941, 1.127, 1.042, 0.965, 1.091,
                     1.027, 0.962, 0.947, 1.128, 0.935, 0.877, 0.893, 1.124, 0.970, 0.922]
SPLIT_UNIX_RATIOS = [0.927, 1.042, 1.029, 1.054, 1.018, 1.049, 1.075, 0.959, 0.949, 0.968,
                     1.012, 1.057, 0.980, 0.958, 1.054, 0.905, 0.953, 0.978, 1.286, 1.148,
                     0.987, 1.036, 1.047, 1.049, 1.057, 1.032, 1.025, 1.075, 1.071, 1.051]


def test_a_pilot_within_the_tolerance_takes_no_more_rounds(crosscheck):
    # 6 rounds' interval is their range: 0.99-1.01 reaches 1% from a ratio of 1.0
    assert crosscheck.planned_rounds([0.99, 1.0, 1.0, 1.0, 1.0, 1.01], 0.03, 40) == 6


def test_a_wide_pilot_takes_the_rounds_that_narrow_it_to_the_tolerance(crosscheck):
    # reach 5% from 1.0 with tolerance 3%: (5/3)^2 = 2.8 times the rounds, as the width
    # shrinks as 1/sqrt(rounds): 6 x 2.78 = 16.7, so 17
    assert crosscheck.planned_rounds([0.95, 1.0, 1.0, 1.0, 1.0, 1.03], 0.03, 40) == 17
    assert crosscheck.planned_rounds([0.95, 1.0, 1.0, 1.0, 1.0, 1.03], 0.03, 12) == 12
    assert crosscheck.planned_rounds([0.5, 1.0, 1.0, 1.0, 1.0, 1.0], 0.03, 40) == 40


def two_stage_rounds(crosscheck, draw, tolerance=0.03, most=40):
    return crosscheck.two_stage_rounds(draw, tolerance, most, float("inf"))[0]


def test_fixed_rounds_take_that_many_and_no_second_stage(crosscheck):
    ratios, wanted = crosscheck.two_stage_rounds(lambda: 1.0, 0.03, 40, float("inf"), fixed=3)
    assert (len(ratios), wanted) == (3, 3)
    ratios, wanted = crosscheck.two_stage_rounds(iter([0.5] + [1.0] * 39).__next__, 0.03, 40,
                                                 float("inf"))
    assert (len(ratios), wanted) == (40, 40)  # one far-off round in six: the second stage


def test_no_round_begins_past_the_time_budget(crosscheck):
    # a budget already spent after the first round: one round, and the 6 still wanted
    ratios, wanted = crosscheck.two_stage_rounds(lambda: 1.0, 0.03, 40, budget=0.0)
    assert (len(ratios), wanted) == (1, 6)


def visits_of(crosscheck, replayed, **kw):
    """Replays `replayed` as the rounds of rounds_in_visits(**kw): the rounds taken at the
    end of each visit but the last, and its result."""
    taken, replay = [], iter(replayed)

    def take_round():
        taken.append(next(replay))
        return taken[-1]
    generator = crosscheck.rounds_in_visits(take_round, 0.03, 40, float("inf"), **kw)
    ends = []
    while (done := crosscheck.next_visit(generator)) is None:
        ends.append(len(taken))
    return ends, done


def test_visits_take_the_pilot_first_and_share_the_rest_evenly(crosscheck):
    # the pilot of the wide test above asks for 17 rounds in all: 6, then 11 over 2 visits
    pilot = [0.95, 1.0, 1.0, 1.0, 1.0, 1.03]
    ends, (ratios, wanted) = visits_of(crosscheck, pilot + [1.0] * 34, visits=3)
    assert ends == [6, 12] and (len(ratios), wanted) == (17, 17)
    # a narrow pilot asks no more: later visits take nothing
    ends, (ratios, wanted) = visits_of(crosscheck, [1.0] * 6, visits=4)
    assert ends == [6, 6, 6] and (len(ratios), wanted) == (6, 6)
    # fixed rounds are shared from the first visit
    ends, (ratios, wanted) = visits_of(crosscheck, [1.0] * 9, fixed=9, visits=3)
    assert ends == [3, 6] and (len(ratios), wanted) == (9, 9)


def test_the_time_between_visits_does_not_count_against_the_budget(crosscheck, monkeypatch):
    clock = [0.0]               # a clock of our own: a round takes 1 s, a visit's gap 100 s
    monkeypatch.setattr(crosscheck.time, "monotonic", lambda: clock[0])

    def one_second_round():
        clock[0] += 1.0
        return 1.0
    rounds = crosscheck.rounds_in_visits(one_second_round, 0.03, 12, 20.0, fixed=12,
                                         visits=3)
    while (done := crosscheck.next_visit(rounds)) is None:
        clock[0] += 100.0       # other pairs' visits: far more than the 20 s budget
    assert len(done[0]) == 12   # 12 s of its own rounds, within the budget


def stop_at_first_narrow_interval(crosscheck, draw, tolerance=0.03, most=40):
    ratios = [draw() for _ in range(crosscheck.FIRST_ROUNDS)]
    while len(ratios) < most and crosscheck.planned_rounds(ratios, tolerance, most) > len(ratios):
        ratios.append(draw())
    return ratios


def coverage_of(crosscheck, rule, pool, seed, trials=3000):
    """How often the interval of `rule`'s rounds, drawn from `pool` with a fixed seed,
    holds the pool's median, and the mean rounds it took."""
    rng = random.Random(seed)
    jitter = [x + rng.uniform(-1e-6, 1e-6) for x in pool]  # no ties, one median
    median = statistics.median(jitter)
    covered, rounds = 0, 0
    for _ in range(trials):
        ratios = rule(crosscheck, lambda: rng.choice(jitter))
        lo, hi = crosscheck.median_interval(ratios)
        covered += lo <= median <= hi
        rounds += len(ratios)
    return covered / trials, rounds / trials


@pytest.mark.parametrize("pool", [SPLIT_PIPE_RATIOS, SPLIT_UNIX_RATIOS])
@pytest.mark.parametrize("noise", [1.0, 0.5, 0.25])
def test_the_two_stage_rounds_keep_the_interval_at_its_level(crosscheck, pool, noise):
    # real rounds, resampled, their spread as measured and scaled down to half and a quarter
    # (quieter pairs, which stop sooner): the interval of all the rounds holds its 95%
    centre = statistics.median(pool)
    scaled = [centre + (x - centre) * noise for x in pool]
    covered, rounds = coverage_of(crosscheck, two_stage_rounds, scaled, seed=30, trials=10000)
    # 95% less 3 standard errors: 0.9435 (the two stages: 0.956-0.967 over 20,000 trials;
    # stopping at the first narrow interval: 0.939 on the split pipe's own rounds)
    assert covered >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / 10000)
    assert rounds < 40  # the second stage stops where the pilot shows the pair quiet


def test_stopping_at_the_first_narrow_interval_would_not_hold_its_level(crosscheck):
    # why the script decides once: looking after every round stops on a lucky narrow
    # interval, and fewer than 95% of those hold the median (on the split pipe's rounds)
    two_stage, _ = coverage_of(crosscheck, two_stage_rounds, SPLIT_PIPE_RATIOS, seed=30)
    every_round, _ = coverage_of(crosscheck, stop_at_first_narrow_interval, SPLIT_PIPE_RATIOS,
                                 seed=30)
    assert every_round < 0.95 <= two_stage


def test_compare_sets_two_runs_side_by_side(crosscheck, tmp_path):
    def run(path, pairs):
        path.write_text("".join(json.dumps({"pair": name, "lmbench": lm, "osmeter": os_,
                                            "ended": [0] * len(lm), "seconds": 7.0}) + "\n"
                                for name, lm, os_ in pairs))
        return str(path)
    lm = [100.0] * 6
    first = run(tmp_path / "1.jsonl", [
        ("null syscall", lm, [101.0, 102, 103, 104, 105, 106]),
        ("bw_mem 8M wr", lm, [80.0] * 6),
        ("stat", lm, [100.0] * 6)])
    second = run(tmp_path / "2.jsonl", [
        ("null syscall", lm, [111.0, 112, 113, 114, 115, 116]),  # 1.135: +9.7%, past 10%: NO
        ("bw_mem 8M wr", lm, [81.0] * 6),
        ("lat_pipe", lm, lm)])
    lines, summary = crosscheck.compare_runs(first, second)
    rows = {line.split(" | ")[0][2:]: line for line in lines[2:]}
    assert list(rows) == ["null syscall", "bw_mem 8M wr"]  # the script's order
    assert rows["null syscall"] == ("| null syscall | 100 ns | 104 ns | 1.035 [1.010, 1.060] | "
                                    "1.135 [1.110, 1.160] | +9.7% | 6 (7); 6 (7) | NO |")
    assert rows["bw_mem 8M wr"].endswith("| +1.2% | 6 (7); 6 (7) | n/a (not like for like) |")
    assert summary == ("1 of 2 pairs in both runs moved by less than 5%; 0 of 1 like-for-like "
                       "pairs were within ±10% in both; in one run only: lat_pipe, stat")


def test_compare_names_a_line_that_is_not_of_json(crosscheck, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"pair": "stat", "lmbench": [1.0]}\n')
    with pytest.raises(SystemExit, match="bad.jsonl, line 1: not a line of --json"):
        crosscheck.compare_runs(str(bad), str(bad))
    with pytest.raises(SystemExit, match="No such file"):
        crosscheck.compare_runs(str(tmp_path / "none.jsonl"), str(bad))
