"""Application tests at a small size; each skips cleanly where its program is missing."""
import os
import shutil
import stat

import pytest

from osmeter.running import coreproc

PROCESS_METRICS = ("wall", "user", "system", "max_rss")

# bench -> the program it needs
PROGRAMS = {
    "app.start.sh": "sh", "app.start.bash": "bash", "app.start.python3": "python3",
    "app.start.perl": "perl", "app.start.vim": "vim", "app.vim_open": "vim",
    "app.convert.avi_mpeg": "ffmpeg", "app.cpu.avi_play": "ffmpeg",
    "app.cpu.audio_play": "ffmpeg",
}


def run(bench, **params):
    inv = coreproc.invoke(bench, params={k: str(v) for k, v in params.items()}, preset="smoke",
                          timeout=120)
    if inv.status == "skipped":
        assert inv.reason.endswith("not installed") or "not ImageMagick" in inv.reason
        assert not inv.samples
        pytest.skip(inv.reason)
    assert inv.status == "ok", "%s: %s\n%s" % (bench, inv.reason, inv.stderr)
    return inv


def check_process_metrics(inv, n):
    for metric in PROCESS_METRICS:
        assert len(inv.values(metric)) == n, metric
    assert all(0 < w < 120e9 for w in inv.values("wall"))
    assert all(v >= 0 for v in inv.values("user") + inv.values("system"))
    assert all(m > 100_000 for m in inv.values("max_rss"))


@pytest.mark.parametrize("bench", ["app.start.sh", "app.start.bash", "app.start.python3",
                                   "app.start.perl", "app.start.vim"])
def test_start_up_times_are_measured(bench):
    inv = run(bench)
    check_process_metrics(inv, 2)
    assert inv.notes["program"] == shutil.which(PROGRAMS[bench])


def test_vim_opens_the_generated_file():
    inv = run("app.vim_open", size="2m")
    check_process_metrics(inv, 1)
    assert inv.notes["file_bytes"] == str(2 << 20)
    assert inv.values("max_rss")[0] > 2 << 20      # the file was loaded into Vim
    assert inv.notes["version"].startswith("VIM")


def test_imagemagick_converts_its_own_jpeg():
    inv = run("app.convert.jpeg_png", size="200")
    check_process_metrics(inv, 1)
    assert "ImageMagick" in inv.notes["version"]
    assert inv.notes["input"].startswith("200x200")


def test_ffmpeg_transcodes_its_own_avi():
    inv = run("app.convert.avi_mpeg")
    check_process_metrics(inv, 1)
    assert inv.notes["input"].startswith("1 s of testsrc")


def test_real_time_decode_reports_a_cpu_share():
    inv = run("app.cpu.avi_play")
    assert len(inv.values("cpu")) == 1 and 0 < inv.values("cpu")[0] < 100 * os.cpu_count()
    assert inv.values("wall")[0] >= 0.9e9           # paced at the 1 s video's own rate


def test_a_missing_program_skips_with_its_name(tmp_path):
    # PATH without the program: the test says so instead of producing a number.
    inv = coreproc.invoke("app.start.perl", preset="smoke", env={"PATH": str(tmp_path)})
    assert inv.status == "skipped" and inv.reason == "perl not installed" and not inv.samples


def test_a_convert_that_is_not_imagemagick_is_not_timed(tmp_path):
    fake = tmp_path / "convert"
    fake.write_text("#!/bin/sh\necho 'not the real thing'\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    inv = coreproc.invoke("app.convert.jpeg_png", preset="smoke",
                          env={"PATH": str(tmp_path)})
    assert inv.status == "skipped" and not inv.samples
    assert "ImageMagick not installed" in inv.reason and str(fake) in inv.reason


def test_several_audio_players_report_a_cpu_share_per_count():
    inv = run("app.cpu.audio_play", instances="1,2")
    for n in (1, 2):
        vals = inv.values("cpu", n)
        assert len(vals) == 1 and 0 < vals[0] < 100 * os.cpu_count()
    assert inv.notes["input"].startswith("1 s of a 440 Hz tone")
    assert inv.notes["duration"].startswith("1 s played per sample (the study's length is not")
