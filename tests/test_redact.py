"""--redact: one test per kind of identifying text (osmeter/data/redact.py).  The whole export
path in every format is tests/test_formats.py's test_redact_leaves_out_...; here each
rule on a run that carries just that."""
import json

import pytest

from osmeter.data import exchange, redact
from osmeter.data.model import system_keys

from clirun import osmeter
from synth import make_run


def redacted_text(run, others=frozenset()) -> str:
    return json.dumps(exchange.run_to_document(redact.redact(run, set(others))))


def with_note(text, host="box7.example"):
    run = make_run("rr", "lbl", seed=4, host=host)
    run.results[0].notes["directory"] = text
    return run


@pytest.mark.parametrize("home", ["/home", "/usr/home", "/var/home", "/export/home",
                                  "/Users"])
def test_user_names_in_every_home_layout(home):
    out = redacted_text(with_note("%s/zoe/bench/osmeter-fs.x" % home))
    assert "zoe" not in out and "%s/<user>/bench" % home in out


def test_root_home_is_not_a_user_name():
    out = redacted_text(with_note("/root/bench"))
    assert "/root/bench" in out


def test_disk_serials_and_uuids():
    run = with_note("/dev/disk/by-id/nvme-Samsung_SSD_980_S64ANS0T123456X on "
                    "/dev/mapper/luks-0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b, "
                    "/dev/disk/by-uuid/1234-ABCD, /dev/disk/by-path/pci-0000:00:1f.2-ata-1")
    run.sysinfo["disks"] = [{"name": "nvme0n1", "model": "Samsung SSD 980",
                             "serial": "S64ANS0T123456X", "wwn": "eui.0025385"}]
    out = redacted_text(run)
    for secret in ("S64ANS0T123456X", "0f1e2d3c-4b5a", "1234-ABCD", "eui.0025385"):
        assert secret not in out, secret
    assert "/dev/disk/by-id/<device>" in out and "luks-<uuid>" in out
    assert "by-path/pci-0000:00:1f.2-ata-1" in out        # a bus position, not a serial
    assert '"model": "Samsung SSD 980"' in out               # what a comparison needs


def test_peer_hosts_named_in_parameters_and_the_command_line():
    run = with_note("x")
    run.results[0].params["peer"] = "far-end.lab.example:7000"
    run.command = "osmeter run net --peer bigiron:7001 --label vs-far-end"
    out = redacted_text(run)
    assert "far-end" not in out and "bigiron" not in out


def test_this_host_and_short_host_names():
    run = with_note("x", host="h7")
    run.label = "h7-nightly"
    run.command = "osmeter run --label h7-nightly --json results.h7x"
    out = redacted_text(run)
    assert "h7-nightly" not in out and "<host>-nightly" in out
    assert "results.h7x" in out                         # not a whole word: left alone


def test_other_runs_hosts_in_labels_when_exported_together(tmp_path):
    a = make_run("ra", "web01 baseline", seed=1, host="web01")
    b = make_run("rb", "compared with web01", seed=2, host="web02")
    ra, rb = redact.redact_all([a, b])
    assert "web01" not in ra.label and "web01" not in rb.label
    assert system_keys(rb.sysinfo)["host"] is None
    files = []
    for run in (a, b):
        files.append(tmp_path / ("%s.json" % run.id))
        exchange.write_run_file(run, files[-1])
    r = osmeter("export", *files, "--format", "long", "--redact", db=tmp_path / "db.sqlite",
                check=0)
    assert "web01" not in r.stdout and "web02" not in r.stdout
