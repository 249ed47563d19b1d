"""What a user reads after a real smoke run: the summary fits the terminal at 80, 100 and
160 columns with every benchmark present and every flagged row marked, and the first
ETA was within a factor of two of how long the run took."""
import json
import re

import pytest

from osmeter.report import display
from osmeter.analysis import flags
from osmeter import stats
from osmeter.running.catalog import Catalog
from osmeter.data.model import Result
from osmeter.base import numbers
from clirun import osmeter


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    """One real smoke run of the default suite (seconds), its output at 80 columns and
    the stored run."""
    db = tmp_path_factory.mktemp("output") / "db.sqlite"
    r = osmeter("run", "--smoke", db=db, check=0, timeout=600, env={"COLUMNS": "80"})
    run = json.loads(osmeter("show", "latest", "--json", db=db, check=0).stdout)
    return db, r, run


def _bench_ids():
    return Catalog().suite("quick")


@pytest.mark.parametrize("width", [80, 100, 160])
def test_summary_fits_the_width_with_every_benchmark(smoke_run, width):
    db, first, _ = smoke_run
    text = first.stdout if width == 80 else \
        osmeter("show", "latest", db=db, check=0, env={"COLUMNS": str(width)}).stdout
    lines = text.splitlines()
    ours = [l for l in lines if str(db) not in l]    # a path is as long as it is
    assert max(len(l) for l in ours) <= width, max(ours, key=len)
    for bench in _bench_ids():
        assert re.search(r"(^|\s)%s(\s|$)" % re.escape(bench), text), bench
    # Grouped by family in the house's order, each family once.
    families = [l[3:-3] for l in lines if l.startswith("== ") and l.endswith(" ==")]
    assert len(families) == len(set(families)) >= 10
    from osmeter.analysis.compare import family_sort_key
    assert families == sorted(families, key=family_sort_key)


def test_flagged_rows_are_marked_without_colour(smoke_run):
    db, _, run = smoke_run
    text = osmeter("show", "latest", db=db, check=0, env={"COLUMNS": "160"}).stdout
    rows = {}
    for line in text.splitlines():
        m = re.match(r"([ !~x]) (\S+(?: \S+)?)\s{2,}", line)
        if m:
            rows[m.group(2).strip()] = m.group(1)
    for r in run["results"]:
        if r["status"] != "ok" or r["shape"] != "point" or "once_per_repetition_s" in (
                r.get("extra") or {}):          # too short to time alone: no row of its own
            continue
        label = r["bench"] if r["metric"] in ("latency", "value") or \
            r["bench"].split(".")[-1] == r["metric"] else "%s %s" % (r["bench"], r["metric"])
        assert label in rows, label
        result = Result.from_dict(r)
        assert rows[label] == display.mark_of([result]), (label, r["warnings"])
    # Two repetitions are said once, below the table, not on every row; the summary
    # ends with the count of disturbed and imprecise results.
    flat = " ".join(text.split())
    assert "few-reps" not in text and "only 2 repetitions" not in text
    assert "Intervals of the median: 50% ([min, max] of 2 repetitions) unless marked" in flat
    assert flags.count_line([Result.from_dict(r) for r in run["results"]]) in flat
    # No number in e-notation, no unscaled huge value, no '0.0000'.
    assert not re.search(r"(?<![\w-])\d+(\.\d+)?[eE][+-]?\d+\b", text)
    assert "0.0000" not in text
    for m in re.finditer(r"([\d,.]+) ns\b", text):
        assert float(m.group(1).replace(",", "")) < 1000, m.group(0)


def test_the_first_eta_is_within_a_factor_of_two(smoke_run):
    """The first estimate, from the core's smoke-preset estimates, against how long the
    run's measuring took (both recorded with the run and printed at its end)."""
    _, first, run = smoke_run
    timing = run["run"]["environment"]["timing"]
    ratio = timing["first_estimate_s"] / timing["measuring_s"]
    assert 0.5 <= ratio <= 2.0, timing
    m = re.search(r"measured for (\S+) \(estimated (\S+) at the start\)", first.stdout)
    assert m and m.group(2) == display.fmt_duration(timing["first_estimate_s"])
    eta = re.search(r"progress: 0/\d+ \S+ \(1/2\), ETA (\S+)", first.stderr)
    assert eta and eta.group(1) == m.group(2)


def test_numbers_read_the_same_everywhere():
    assert numbers.number(2.0) == "2" and numbers.number(1234.5) == "1,234"
    assert numbers.number(0.000123) == "0.000123" and numbers.number(9.996) == "10.0"
    assert numbers.quantity(1_234_567, "ns") == "1.23 ms"
    assert numbers.quantity(0.0001, "s") == "100 µs"
    assert numbers.quantity(999.6, "ns") == "1.00 µs"
    assert numbers.quantity(2_310_144, "bytes") == "2.20 MiB"
    assert numbers.quantity(27776, "MB/s") == "27.8 GB/s"
    assert numbers.quantity(30030, "Mbit/s") == "30.0 Gbit/s"
    assert numbers.quantity(107467.3, "ops/s") == "107,467 ops/s"
    assert numbers.size(65536) == "64 KiB" and numbers.coordinate(2.0, "processes") == "2"
    assert [numbers.ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd", "101st"]
    for v in (1e-9, 3.3e-7, 1e12, 123456789.0, -0.5):
        assert "e" not in numbers.number(v).lower()


def test_a_time_of_zero_is_below_resolution_not_a_result():
    from osmeter.data.model import Result, Sample
    smp = [Sample(r, None, 0.0) for r in range(3) for _ in range(2)]
    r = Result(bench="app.start.sh", metric="system", unit="ns", better="lower",
               shape="point", samples=smp, summary=stats.summarize(smp))
    text = display.results_table([r], width=100)
    line = next(l for l in text.splitlines() if "app.start.sh system" in l)
    assert "below resolution" in line and "0 ns" not in line and "[0, 0]" not in line


def test_runs_the_report_and_the_count_line_count_results_alike(smoke_run, tmp_path):
    """One definition of a result (measured, with a row of its own: flags.counted): the
    same number in `osmeter runs`, the report's header and the run's count line; what
    is left out (skipped, failed, phases too short to time alone) is said once, beside
    the count line."""
    db, first, run = smoke_run
    results = [Result.from_dict(r) for r in run["results"]]
    n = len(flags.counted(results))
    assert 0 < n < len(results)            # a smoke run has skipped rows and short phases
    listed = json.loads(osmeter("runs", "--json", db=db, check=0).stdout)
    assert [r["results"] for r in listed] == [n]
    assert listed[0]["rows"] == len(results)
    table = osmeter("runs", db=db, check=0, env={"COLUMNS": "200"}).stdout
    assert re.search(r"\s%d\n" % n, table.splitlines()[2] + "\n"), table
    count = re.search(r"(\d+) (?:of (\d+) )?results?[:\s]", " ".join(first.stdout.split()))
    assert int(count.group(2) or count.group(1)) == n, count.group(0)
    flat = " ".join(first.stdout.split())
    assert flat.count("Not counted:") == 1
    report = tmp_path / "r.html"
    osmeter("report", "latest", "-o", report, db=db, check=0)
    assert re.search(r"1 run, %d results\." % n, report.read_text())
