"""The HTML report in real headless Chromium (Debian package `chromium`).

Opens the report over the DevTools protocol at a laptop size (1366×768) and checks: no
console errors or exceptions, every figure rendered with a non-zero size, no horizontal
overflow of the page, a screenshot that is a real PNG.  Chromium runs in its own process
group and is killed with it at the end; the test checks nothing of it is left.
"""
import os
import struct

import pytest

from osmeter.analysis import compare
from osmeter.report import html
from cdp import Browser, find_chromium
from synth import make_run

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed "
                                "(apt-get install -y chromium)")
SHOT_DIR = os.environ.get("OSMETER_REPORT_SHOTS")      # keep screenshots to look at


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


def _report(tmp_path, runs, references=True):
    text, figures = html.render(compare.compare(runs), references=references)
    path = tmp_path / "report.html"
    path.write_text(text, encoding="utf-8")
    return path, figures


def _check_page(b, n_figures, shot):
    assert b.errors() == []
    charts = b.evaluate("""Array.from(document.querySelectorAll('svg.chart')).map(s => {
        const r = s.getBoundingClientRect();
        return [s.dataset.kind, r.width, r.height, s.querySelectorAll('*').length];
    })""")
    assert len(charts) == n_figures
    for kind, w, h, elements in charts:
        assert w > 200 and h > 80 and elements > 10, (kind, w, h, elements)
    # Usable at a laptop width: the page itself never scrolls sideways (wide tables
    # scroll inside their own box).
    widths = b.evaluate("[document.body.scrollWidth, document.documentElement.scrollWidth,"
                        " window.innerWidth]")
    assert widths[0] <= widths[2] and widths[1] <= widths[2], widths
    # Text is not microscopic: the smallest chart is drawn at least at 60% of its size.
    assert min(c[1] for c in charts) >= 0.6 * 620 or widths[2] < 1000
    b.screenshot(str(shot))
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", data[16:24]) == (1366, 768)
    if SHOT_DIR:
        os.makedirs(SHOT_DIR, exist_ok=True)
        b.screenshot(os.path.join(SHOT_DIR, shot.stem + "-full.png"), full_page=True)


def test_report_renders_in_chromium(tmp_path):
    runs = [make_run("ra", "linux-a", seed=1),
            make_run("rb", "linux-b", speed=1.3, seed=2, kernel="6.6.0", curve_class="O(n)",
                     slope=4.0, cpu_rate=10400.0),
            make_run("rc", "linux-c", seed=3)]
    path, figures = _report(tmp_path, runs)
    b = Browser(CHROMIUM)
    pgid = b.proc.pid
    try:
        b.open(path.as_uri(), 1366, 768)
        _check_page(b, len(figures), tmp_path / "report-1366.png")
        kinds = b.evaluate("Array.from(document.querySelectorAll('svg.chart'))"
                           ".map(s => s.dataset.kind)")
        assert {"bar", "sweep", "scatter"} <= set(kinds)
        # Every scatter point and fitted curve made it into the DOM.
        assert b.evaluate("document.querySelectorAll('svg[data-kind=scatter] g.points .pt')"
                          ".length") == sum(len(r.samples) for run in runs for r in run.results
                                            if r.shape == "scatter")
        assert b.evaluate("document.querySelectorAll('polyline.fit').length") == 3
        # The page also works on a narrow window: still no sideways scrolling.
        b.open(path.as_uri(), 800, 900)
        assert b.errors() == []
        assert b.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    finally:
        b.close()
    assert not _group_alive(pgid), "chromium processes left behind"
    assert not os.path.exists(b.profile)


def test_single_run_report_renders_in_chromium(tmp_path):
    path, figures = _report(tmp_path, [make_run("ra", "only", seed=1)])
    with Browser(CHROMIUM) as b:
        b.open(path.as_uri(), 1366, 768)
        _check_page(b, len(figures), tmp_path / "single-1366.png")
    assert not _group_alive(b.proc.pid)
