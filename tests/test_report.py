"""The HTML report and its SVG figures, without a browser (see test_report_browser.py)."""
import re
import xml.etree.ElementTree as ET


from osmeter import cli
from osmeter.analysis import compare
from osmeter.data import exchange
from osmeter.report import html, svg
from synth import make_run

SVG_NS = "{http://www.w3.org/2000/svg}"


def runs3():
    return [make_run("ra", "linux-a", seed=1),
            make_run("rb", "linux-b", speed=1.3, seed=2, kernel="6.6.0", curve_class="O(n)",
                     slope=4.0),
            make_run("rc", "linux-c", seed=3)]


def test_report_is_self_contained():
    text, figures = html.render(compare.compare(runs3()), references=True)
    assert text.startswith("<!DOCTYPE html>")
    assert "<script" not in text.lower() and "<link" not in text.lower()
    # The only URL is the SVG namespace name, which is never fetched.
    urls = set(re.findall(r"""(?:https?:)?//[^\s"'<>)]+""", text))
    assert urls <= {"http://www.w3.org/2000/svg"}, urls
    assert "@import" not in text and "url(" not in text
    assert text.count('<svg xmlns="http://www.w3.org/2000/svg" class="chart"') == len(figures) >= 6


def test_every_kind_of_figure_is_there():
    text, figures = html.render(compare.compare(runs3()), references=True)
    kinds = [re.search(r'data-kind="(\w+)"', s).group(1) for _, s in figures]
    assert kinds.count("sweep") == 1 and kinds.count("scatter") == 1
    assert kinds.count("bar") >= 4           # indices, per-category bars, references
    names = [n for n, _ in figures]
    assert len(set(names)) == len(names) and all(n.endswith(".svg") for n in names)
    # Each figure is well-formed XML with a title and a non-zero drawing size.
    for _, s in figures:
        root = ET.fromstring(s)
        assert root.find(SVG_NS + "title").text
        _, _, w, h = (float(v) for v in root.get("viewBox").split())
        assert w > 100 and h > 100


def test_sweep_has_log_x_and_one_line_per_run():
    text, figures = html.render(compare.compare(runs3()))
    sweep = next(s for _, s in figures if 'data-kind="sweep"' in s)
    assert "(log scale)" in sweep
    assert sweep.count('class="series"') == 3
    assert "4 KiB" in sweep and "1 MiB" in sweep


def test_scatter_has_every_point_the_fit_and_the_class():
    cmp = compare.compare(runs3())
    _, figures = html.render(cmp)
    scatter = next(s for _, s in figures if 'data-kind="scatter"' in s)
    root = ET.fromstring(scatter)
    groups = [g for g in root.iter(SVG_NS + "g") if g.get("class") == "points"]
    assert len(groups) == 3
    n_points = sum(1 for s in runs3()[0].results if s.shape == "scatter" for _ in s.samples)
    assert sum(1 for g in groups for e in g if "pt" in (e.get("class") or "").split()) \
        == 3 * n_points == int(root.get("data-points"))
    # Each run its own marker as well as its colour.
    assert [{e.tag for e in g} - {SVG_NS + "title"} for g in groups][:3] == [
        {SVG_NS + "circle"}, {SVG_NS + "rect"}, {SVG_NS + "polygon"}]
    assert scatter.count('class="fit"') == 3
    assert "linux-b: O(n)" in scatter and "linux-a: O(1)" in scatter


def test_scatter_thins_huge_populations_and_says_so():
    pts = [(float(i), 100.0 + i % 7) for i in range(20000)]
    s = svg.scatter_chart("big", "n", "ns", [(0, "one", pts, None, "O(1)")])
    assert "every 4th point (5,000 of 20,000)" in s
    assert s.count('<circle class="pt"') == 5000


def test_bars_only_on_linear_axes_dots_on_log_axes():
    s = svg.bar_chart("t", "ns", [("fast", [(0, 10.0, 9.0, 11.0)]),
                                  ("slow", [(0, 5000.0, 4000.0, 6000.0)])], ["a"])
    assert "(log scale)" in s and 'data-kind="dot"' in s
    assert s.count('class="bar"') == 0 and 'data-points="2"' in s
    s = svg.bar_chart("t", "ns", [("fast", [(0, 1000.0, 900.0, 1100.0)]),
                                  ("slow", [(0, 5000.0, 4000.0, 6000.0)])], ["a"])
    assert "log" not in s and s.count('class="bar"') == 2
    assert "µs" in s                          # the axis in the values' own unit
    s = svg.bar_chart("t", "ns", [("x", [(0, 10.0, None, None), (1, None, None, None)])],
                      ["a", "b"])
    assert "not measured" in s


def test_scale_ticks():
    assert svg.Scale(0, 100, 0, 1).ticks() == [0, 20, 40, 60, 80, 100]
    assert svg.Scale(1, 1e6, 0, 1, log=True).ticks() == [1, 10, 100, 1e3, 1e4, 1e5, 1e6]
    assert svg.Scale(1, 100, 0, 100, log=True, zero_gap=20)(0) == 0      # 0 before the break
    assert svg.Scale(1, 100, 0, 100, log=True, zero_gap=20)(1) == 20


def test_single_run_report_shows_system_information():
    text, _ = html.render(compare.compare([runs3()[0]]))
    assert "System information" in text and "What differs" not in text


def test_report_cli_writes_html_and_figures(tmp_path, capsys):
    from osmeter.data.store import Store
    db = str(tmp_path / "db.sqlite")
    store = Store(db)
    for run in runs3():
        store.save_run(run)
    store.close()
    out = tmp_path / "r.html"
    figs = tmp_path / "figs"
    assert cli.main(["--db", db, "report", "ra", "rb", "-o", str(out), "--figures", str(figs),
                     "--references"]) == 0
    assert "wrote" in capsys.readouterr().err
    files = sorted(p.name for p in figs.iterdir())
    assert len(files) >= 6 and all(f.endswith(".svg") for f in files)
    for f in files:
        ET.parse(figs / f)                     # valid standalone SVG documents
    text = out.read_text()
    assert "Against the studies" in text and "DECstation 3100" in text
    # Default: the latest run.
    assert cli.main(["--db", db, "report", "-o", str(tmp_path / "latest.html")]) == 0
    assert "linux-c" in (tmp_path / "latest.html").read_text()


def test_report_cli_refuses_smoke_with_real(tmp_path, capsys):
    a = tmp_path / "a.json"
    s = tmp_path / "s.json"
    exchange.write_run_file(make_run("ra", "A", seed=1), a)
    exchange.write_run_file(make_run("rs", "S", seed=2, smoke=True), s)
    assert cli.main(["--db", str(tmp_path / "db"), "report", str(a), str(s),
                     "-o", str(tmp_path / "x.html")]) == 2
    assert "smoke" in capsys.readouterr().err
    assert not (tmp_path / "x.html").exists()


def test_contents_links_point_at_sections():
    text, _ = html.render(compare.compare(runs3()), references=True)
    targets = re.findall(r'<a href="#([^"]+)"', text)
    assert len(targets) >= 8
    for t in targets:
        assert 'id="%s"' % t in text, t


def test_png_figures_for_papers(tmp_path, capsys, monkeypatch):
    import shutil
    from osmeter.data.store import Store
    db = str(tmp_path / "db.sqlite")
    store = Store(db)
    for run in runs3():
        store.save_run(run)
    store.close()
    figs = tmp_path / "figs"
    args = ["--db", db, "report", "ra", "-o", str(tmp_path / "r.html"), "--figures", str(figs),
            "--png"]
    if shutil.which("rsvg-convert"):
        assert cli.main(args) == 0
        svgs = sorted(p.stem for p in figs.glob("*.svg"))
        pngs = sorted(p.stem for p in figs.glob("*.png"))
        assert svgs and pngs == svgs
        assert all((figs / (n + ".png")).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for n in pngs)
    monkeypatch.setattr(shutil, "which", lambda name: None)   # as on a machine without it
    capsys.readouterr()
    assert cli.main(args) == 2
    assert "need rsvg-convert" in capsys.readouterr().err
    assert cli.main(["--db", db, "report", "ra", "--png"]) == 2


def _sections(text: str) -> list[str]:
    """The ids (or titles) of the page's h2 sections, in order."""
    return [m.group(1) or m.group(2) for m in
            re.finditer(r'<h2(?: id="([^"]+)")?>([^<]*)</h2>', text)]


def test_the_headline_comes_first_and_answers_the_question():
    """Before any other section: the machine in one line per run, the overall and
    per-category indices with intervals, the largest differences, the studies at a
    glance, then what was flagged (the count line)."""
    text, _ = html.render(compare.compare(runs3()))
    assert _sections(text)[0] == "Headline"
    head = text[text.index('<section id="headline">'):text.index("</section>")]
    for run in runs3():
        assert '<b>%s</b>' % run.label in head
    assert head.count('class="machine"') == 3 and "glibc" in head
    assert "ratios to linux-a" in head and "<th>overall</th>" in head
    assert re.search(r"×[\d.]+ \[[\d.]+–[\d.]+\]", head)          # an index, its interval
    assert "The largest differences from linux-a" in head
    assert "Against the studies, at a glance" in head
    # each study's mean with the speed-ups that move it (issue 44: a bare "×0.818")
    assert re.search(r"×[\d.,]+ over \d+ numbers, from ×[\d.,]+ \([\w.]+\) to ×[\d.,]+ "
                     r"\([\w.]+\)", head), head
    assert "&lt; 1 = slower than the study" in head
    assert "Flagged" in head and "results" in head
    # the legends come after it, each where it applies
    assert text.index("Ratios: speed relative") > text.index("</section>")


def test_a_single_run_report_has_no_baseline_legend_nor_its_id_twice():
    run = make_run("ra", "ra", seed=1)
    run.label = None
    text, _ = html.render(compare.compare([run]))
    assert _sections(text)[0] == "Headline"
    body = text[text.index("<body>"):].lower()
    assert "baseline" not in re.sub(r"<svg.*?</svg>", "", body, flags=re.S)
    runs_table = text[text.index('<h2 id="runs">'):]
    runs_table = runs_table[:runs_table.index("</table>")]
    assert runs_table.count(run.id) == 1


def test_skipped_benchmarks_are_one_line_each_and_titles_name_the_axis_unit():
    """A benchmark skipped in every run is one table line with its reason, no empty
    chart and no fold of sizes; a bar chart's title names the unit its axis shows."""
    from osmeter.data.model import Result
    run = make_run("ra", "ra", seed=1)
    run.results.append(Result(bench="app.cpu.avi_play", metric="cpu", x=None, x_name=None,
                              unit="%", better="lower", shape="point", params={},
                              status="skipped", reason="ffmpeg not installed"))
    run.results.append(Result(bench="mem.copy", metric="bandwidth", x=None, x_name="bytes",
                              unit="MB/s", better="higher", shape="sweep", params={},
                              status="skipped", reason="cannot allocate"))
    text, figures = html.render(compare.compare([run]))
    assert "app.cpu.avi_play: skipped: ffmpeg not installed" in text
    assert "mem.copy: skipped: cannot allocate" in text
    assert "1 sizes" not in text
    assert not [n for n, _ in figures if "avi_play" in n or "mem.copy" in n]
    scaled = 0
    for name, s in figures:
        if 'data-kind="bar"' not in s:
            continue
        texts = re.findall(r"<text[^>]*>([^<]*)</text>", s)
        title_unit = re.match(r".* \((.*)\)$", texts[0]).group(1)
        assert any(t in (title_unit, title_unit + " (log scale)") for t in texts[1:]), \
            (name, texts[0])                  # the axis says the title's unit
        scaled += title_unit not in name      # stored in ns, drawn in µs
    assert scaled                             # (so the check above can fail)


def test_table_cells_never_break_inside_a_word():
    """Issue 44: 'cpu.int eger', 'benchm ark'.  overflow-wrap:anywhere lets a table shrink
    its columns below their longest word; break-word does not (a table wider than the page
    scrolls in its .scroll box instead)."""
    import re
    rules = {k.strip(): v for k, v in re.findall(r"([^{}]+)\{([^}]*)\}", html.CSS)}
    cells = rules["th,td"]
    assert "overflow-wrap:break-word" in cells
    assert "anywhere" not in cells and "break-all" not in html.CSS
    text, _ = html.render(compare.compare(runs3()))
    assert text.count("<table") == text.count('<div class="scroll"><table')


def test_a_sweep_skipped_in_one_run_is_shown_beside_the_others_points():
    """NetBSD skipped fs.bonnie.* (a sweep) where Linux measured it: the skipped result has
    no x, and the report's sweep table stopped with a TypeError on it (issue 39)."""
    from osmeter.data.model import Result
    a, b = make_run("ra", "linux", seed=1), make_run("rb", "netbsd", seed=2)
    b.results = [r for r in b.results if r.bench != "mem.read"] + [Result(
        bench="mem.read", metric="bandwidth", unit="MB/s", better="higher", shape="sweep",
        x_name="bytes", status="skipped", reason="cannot make the cache cold here")]
    text, _ = html.render(compare.compare([a, b]))
    section = text[text.index("mem.read bandwidth: "):]
    assert "4 sizes, bytes 4 KiB–16 MiB" in section[:200], section[:200]
    assert "cannot make the cache cold here" in text
