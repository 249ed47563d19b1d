"""The report of real runs in headless Chromium (not only synthetic data).

Two real runs at the quick preset of a subset chosen to exercise every kind of figure
and the cases that went wrong before: fs.crtdel (a sweep over size that starts at 0
bytes, on a log x axis), net.http_connect and scale.exit.dynamic (scatters whose few slow
operations flattened the rest), mem.read (a sweep with its cache plateaus), app.start.sh
(CPU times that may be below the clock's resolution), syscall.getpid, ctx.pipe_pingpong
and cpu.integer (bars, the studies' tables, MIPS-relative speeds).  Two repetitions
each: a few seconds per run.

Checked at 1366 and 800 px: no console errors, no sideways scrolling of the page, no
table wider than its box at 1366 px (every size table opened), no cell in e-notation or
with an unscaled ns value above 10^6, every figure draws as many values as its caption
says, and the studies' speed-up charts hold every published row that has a speed-up.
"""
import os
import re

import pytest

from osmeter.analysis import compare
from osmeter import studies
from osmeter.report import html
from osmeter.data.store import Store
from cdp import Browser, find_chromium
from clirun import labelled_runs

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed "
                                "(apt-get install -y chromium)")
SUBSET = ["fs.crtdel", "net.http_connect", "scale.exit.dynamic", "mem.read", "app.start.sh",
          "syscall.getpid", "ctx.pipe_pingpong", "cpu.integer"]
SHOT_DIR = os.environ.get("OSMETER_REPORT_SHOTS")      # keep screenshots to look at


@pytest.fixture(scope="module")
def real_report(tmp_path_factory):
    d = tmp_path_factory.mktemp("real-report")
    db = d / "db.sqlite"
    labelled_runs(db, SUBSET, ("first", "second"), "--preset", "quick", "--runs", "2",
                  timeout=600)
    store = Store(str(db))
    runs = [store.load_run("first"), store.load_run("second")]
    store.close()
    text, figures = html.render(compare.compare(runs), references=True)
    path = d / "report.html"
    path.write_text(text, encoding="utf-8")
    return path, runs, figures


CAPTION_COUNT = re.compile(r"([\d,]+) drawn$|([\d,]+) points?$")


def _check(b, width):
    assert b.errors() == []
    assert b.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), width
    b.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    assert b.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), width


def test_real_report_in_chromium(real_report):
    path, runs, figures = real_report
    with Browser(CHROMIUM) as b:
        b.open(path.as_uri(), 1366, 768)
        # The first screen answers the question: the headline is the first section and
        # starts near the top, each run's machine on it.
        first = b.evaluate("""(() => {
            const h = document.querySelector('section#headline');
            const h2 = document.querySelector('h2');
            return [h2.innerText, h ? h.getBoundingClientRect().top : -1,
                    h ? h.querySelectorAll('p.machine').length : 0,
                    h ? h.innerText : ''];
        })()""")
        assert first[0] == "Headline" and 0 <= first[1] < 200, first[:2]
        assert first[2] == len(runs) and "Flagged" in first[3]
        _check(b, 1366)
        wide = b.evaluate("""Array.from(document.querySelectorAll('div.scroll'))
            .filter(d => d.offsetParent !== null && d.scrollWidth > d.clientWidth + 1)
            .map(d => d.innerText.slice(0, 60))""")
        assert wide == [], wide
        cells = b.evaluate("Array.from(document.querySelectorAll('td')).map(c => c.innerText)")
        for text in cells:
            assert not re.search(r"(?<![\w-])\d+(\.\d+)?[eE][+-]?\d+\b", text), text
            for m in re.finditer(r"([\d,.]+)\s*ns\b", text):
                assert float(m.group(1).replace(",", "")) <= 1e6, text
        figs = b.evaluate("""Array.from(document.querySelectorAll('figure')).map(f => [
            f.id, f.querySelector('svg.chart').dataset.points,
            f.querySelectorAll('svg.chart .pt').length,
            f.querySelector('figcaption').innerText])""")
        assert len(figs) == len(figures)
        for fid, declared, drawn, caption in figs:
            m = CAPTION_COUNT.search(caption)
            assert m, caption
            said = int((m.group(1) or m.group(2)).replace(",", ""))
            assert said == drawn == int(declared), (fid, caption, drawn, declared)
        # fs.crtdel's 0-byte point is on the chart (behind the axis break).
        crtdel = [f for f in figs if f[0].startswith("fig-fs.crtdel")]
        assert crtdel and all(f[2] == 2 * 5 for f in crtdel)     # 0..1m: 5 sizes x 2 runs
        # The studies' speed-up charts hold every row that has a speed-up.
        speedups = sum(1 for rr in studies.against(runs) for u in rr.speedups if u is not None)
        assert speedups and sum(f[2] for f in figs
                                if f[0].startswith("fig-references_speedup")) == speedups
        if SHOT_DIR:
            os.makedirs(SHOT_DIR, exist_ok=True)
            b.screenshot(os.path.join(SHOT_DIR, "real-1366-full.png"), full_page=True)
        b.open(path.as_uri(), 800, 900)
        _check(b, 800)
        if SHOT_DIR:
            b.screenshot(os.path.join(SHOT_DIR, "real-800-full.png"), full_page=True)
