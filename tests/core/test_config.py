"""Config validation: every mistake named with its file and field, before anything is touched."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent.config import load_config
from core.errors import EXIT_CONFIG, ConfigError
from core.validate import Invalid
from drivers.label import LabelConfig
from protocol.redis_config import ClusterConfig, RedisConfig
from tests.support.processes import ROOT

EXAMPLE = ROOT / "config" / "hall-a-1.yaml"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "agent.yaml"
    path.write_text(text, encoding="utf-8")
    return path


BASE = """
venue: expo-2026
printer:
  name: hall-a-1
  location: Hall A
  driver: {language: sim, transport: sim}
"""


def problems(path: Path) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.path == str(path)
    return info.value.problems


def test_the_shipped_example_is_valid() -> None:
    config = load_config(EXAMPLE)
    assert config.printer.name == "hall-a-1" and config.timing.dead_after == 3.0


def test_defaults_fill_what_is_left_out(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, BASE))
    assert config.redis.url == "redis://127.0.0.1:6379/0"
    assert config.timing.heartbeat_interval == 1.0 and config.jobs.max_attempts == 3


def test_http_listen_off_as_yaml_writes_it(tmp_path: Path) -> None:
    for text in ("off", '"off"', "null", "no"):
        assert load_config(write(tmp_path, BASE + f"http:\n  listen: {text}\n")).http.listen is None
    assert problems(write(tmp_path, BASE + "http:\n  listen: on\n")) == ["http.listen: must be text"]


def test_unknown_key_is_an_error_with_a_suggestion(tmp_path: Path) -> None:
    text = BASE + "timing:\n  heartbeat_intervall: 2\n"
    assert problems(write(tmp_path, text)) == [
        "timing.heartbeat_intervall: unknown field (did you mean 'heartbeat_interval'?)"
    ]


def test_missing_and_out_of_range_fields_are_each_named(tmp_path: Path) -> None:
    text = """
venue: Expo 2026
printer:
  location: Hall A
  driver: {language: zpl, transport: tcp, port: 99999}
"""
    found = problems(write(tmp_path, text))
    assert any(p.startswith("venue: must be lowercase") and "'Expo 2026'" in p for p in found)
    assert "printer.name: required field is missing" in found
    assert any(p.startswith("printer.driver.port:") and "65535" in p for p in found)


def test_transport_needs_its_own_fields(tmp_path: Path) -> None:
    text = BASE.replace("{language: sim, transport: sim}", "{language: zpl, transport: tcp}")
    assert problems(write(tmp_path, text)) == ["printer.driver: transport 'tcp' needs 'host'"]
    text = BASE.replace(
        "{language: sim, transport: sim}", "{language: zpl, transport: serial, host: x, device: /dev/ttyS0}"
    )
    assert any("host belong(s) to transport 'tcp'" in p for p in problems(write(tmp_path, text)))


def test_ipp_printer_is_reached_at_its_uri(tmp_path: Path) -> None:
    def driver(block: str) -> list[str]:
        return problems(write(tmp_path, BASE.replace("{language: sim, transport: sim}", block)))

    config = load_config(
        write(tmp_path, BASE.replace("{language: sim, transport: sim}", "{language: ipp, uri: 'ipp://h/x'}"))
    )
    assert config.printer.driver.transport is None and config.printer.driver.uri == "ipp://h/x"
    assert driver("{language: ipp}") == [
        "printer.driver: language 'ipp' needs 'uri' (ipp://HOST[:PORT]/PATH, or ipps://... with 'tls_fingerprint')"
    ]
    assert any("not an IPP printer URI" in p for p in driver("{language: ipp, uri: 'http://h/x'}"))
    assert any("needs 'tls_fingerprint'" in p for p in driver("{language: ipp, uri: 'ipps://h/x'}"))
    assert any("not a SHA-256" in p for p in driver("{language: ipp, uri: 'ipps://h/x', tls_fingerprint: 'AB:CD'}"))
    pinned = "{language: ipp, uri: 'ipps://h/x', tls_fingerprint: '" + "ab" * 32 + "'}"
    assert load_config(write(tmp_path, BASE.replace("{language: sim, transport: sim}", pinned))).printer.driver.uri
    assert any("leave out 'transport'" in p for p in driver("{language: ipp, transport: tcp, uri: 'ipp://h/x'}"))
    assert any("reached at its 'uri' only" in p for p in driver("{language: ipp, uri: 'ipp://h/x', port: 631}"))
    assert any("for language 'ipp'" in p for p in driver("{language: zpl, transport: tcp, host: h, uri: 'ipp://h/x'}"))
    assert any("needs 'transport'" in p for p in driver("{language: zpl, host: h}"))


def test_yaml_syntax_error_names_the_line(tmp_path: Path) -> None:
    found = problems(write(tmp_path, "venue: x\nprinter: [unclosed\n"))
    assert len(found) == 1 and found[0].startswith("line ") and "not valid YAML" in found[0]


def test_missing_file_and_non_mapping(tmp_path: Path) -> None:
    assert problems(tmp_path / "nope.yaml") == ["file not found"]
    assert "mapping" in problems(write(tmp_path, "- a\n- b\n"))[0]


def test_password_sources_are_checked_but_never_shown(tmp_path: Path) -> None:
    text = BASE + "redis:\n  url: redis://127.0.0.1:6379/0\n  password_env: BADGE_TEST_NOPE\n"
    assert problems(write(tmp_path, text)) == ["redis.password_env: environment variable BADGE_TEST_NOPE is not set"]
    secret = tmp_path / "pw"
    secret.write_text("hunter2-secret\n")
    text = BASE + f"redis:\n  url: redis://127.0.0.1:6379/0\n  password_file: {secret}\n"
    config = load_config(write(tmp_path, text))
    assert config.redis.password() == "hunter2-secret"
    url = BASE + "redis:\n  url: redis://user:hunter2-secret@127.0.0.1:6379/0\n"
    assert "hunter2" not in load_config(write(tmp_path, url)).redis.safe_url()


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )


def test_check_config_cli_ok_and_errors_without_traceback(tmp_path: Path) -> None:
    ok = run_cli("check-config", str(EXAMPLE))
    assert ok.returncode == 0, ok.stderr
    assert "hall-a-1" in ok.stdout and "Hall A, desk 1" in ok.stdout and ok.stdout.rstrip().endswith("OK")
    bad = run_cli("check-config", str(write(tmp_path, BASE + "bogus: 1\n")))
    assert bad.returncode == EXIT_CONFIG
    assert str(tmp_path / "agent.yaml") in bad.stderr and "bogus: unknown field" in bad.stderr
    assert "Traceback" not in bad.stderr + bad.stdout


def test_check_config_warns_about_a_world_readable_secret(tmp_path: Path) -> None:
    text = BASE + "redis:\n  url: redis://:s3cret-value@127.0.0.1:6379/0\n"
    path = write(tmp_path, text)
    path.chmod(0o644)
    result = run_cli("check-config", str(path))
    assert result.returncode == 0
    assert "every user can read it" in result.stderr
    assert "s3cret-value" not in result.stdout + result.stderr
    path.chmod(0o640)  # root:badge-agent 0640 is the recommended set-up: no warning
    assert "every user can read it" not in run_cli("check-config", str(path)).stderr


def test_run_refuses_a_bad_config_before_touching_anything(tmp_path: Path) -> None:
    # Redis URL points at a closed port: a config error must be reported first, and nothing else attempted.
    path = write(tmp_path, BASE.replace("hall-a-1", "Hall A 1"))
    result = run_cli("run", "-c", str(path))
    assert result.returncode == EXIT_CONFIG
    assert "printer.name" in result.stderr and "Traceback" not in result.stderr


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    text = """
venue: expo-2026
printer:
  name: hall-a-1
  driver: {language: zpl, transport: tcp, host: printer-1, port: 0, labl: {dpi: 300}}
timing:
  heartbeat_interval: 0.01
  dead_after_misses: three
log: {format: xml}
"""
    assert problems(write(tmp_path, text)) == [
        "printer.driver.labl: unknown field (did you mean 'label'?)",
        "printer.driver.port: must be >= 1 (got 0)",
        "timing.heartbeat_interval: must be >= 0.05 (got 0.01)",
        "timing.dead_after_misses: must be a whole number (got 'three')",
        "log.format: must be one of text, json (got 'xml')",
    ]


def test_unknown_key_far_from_a_known_one_lists_the_known_ones(tmp_path: Path) -> None:
    assert problems(write(tmp_path, BASE + "jobs:\n  zzz: 1\n")) == [
        "jobs.zzz: unknown field (known: max_attempts, test_print_on_recovery)"
    ]


def test_a_cross_field_check_is_reported_at_its_section(tmp_path: Path) -> None:
    text = BASE + f"redis:\n  url: rediss://h:6380/0\n  tls: {{cert_file: {EXAMPLE}}}\n"
    assert problems(write(tmp_path, text)) == [
        "redis.tls: give cert_file and key_file together (a client certificate and its key)"
    ]
    # An explicit url next to a sentinel is a mistake even when it is the default url.
    text = BASE + "redis:\n  url: redis://127.0.0.1:6379/0\n  sentinel: {master: m, nodes: ['h:26379']}\n"
    assert problems(write(tmp_path, text)) == ["redis: give one of url, sentinel or cluster, not url and sentinel"]


def test_bad_types_and_lengths_read_as_plain_english(tmp_path: Path) -> None:
    text = BASE.replace("location: Hall A", f"location: {'x' * 121}") + (
        "jobs:\n  test_print_on_recovery: maybe\nredis:\n  sentinel: {master: '', nodes: []}\n"
    )
    found = problems(write(tmp_path, text))
    assert found == [
        "printer.location: must be at most 120 characters (got '" + "x" * 59 + "...)",  # cut short
        "redis.sentinel.master: must not be empty",
        "redis.sentinel.nodes: must not be empty",
        "jobs.test_print_on_recovery: must be true or false (got 'maybe')",
    ]


def test_usb_ids_and_the_label_that_follows_the_language(tmp_path: Path) -> None:
    driver = "{language: brother_ql, transport: usb, vendor_id: '0x04f9', product_id: 0x209d}"
    config = load_config(write(tmp_path, BASE.replace("{language: sim, transport: sim}", driver)))
    assert (config.printer.driver.vendor_id, config.printer.driver.product_id) == (0x04F9, 0x209D)
    assert config.printer.driver.label.dpi == 300  # the Brother stock, as no label was given
    driver = (
        "{language: brother_ql, transport: usb, vendor_id: 04f9, product_id: 209d, label: {dpi: 203}, model: QL-1100}"
    )
    config = load_config(write(tmp_path, BASE.replace("{language: sim, transport: sim}", driver)))
    assert config.printer.driver.label == LabelConfig(dpi=203)  # given: kept, whatever the language
    driver = "{language: zpl, transport: usb, vendor_id: zebra, product_id: 1}"
    assert problems(write(tmp_path, BASE.replace("{language: sim, transport: sim}", driver))) == [
        "printer.driver.vendor_id: not a USB id: 'zebra' (write it as lsusb shows it, e.g. 0a5f)"
    ]


def test_usb_without_ids_and_brother_stock_the_model_cannot_take_are_refused(tmp_path: Path) -> None:
    def driver_problems(driver: str) -> list[str]:
        return problems(write(tmp_path, BASE.replace("{language: sim, transport: sim}", driver)))

    assert driver_problems("{language: zpl, transport: usb}") == [
        "printer.driver: transport 'usb' needs 'vendor_id' and 'product_id' (as lsusb or `badge-agent detect` "
        "shows them)"
    ]
    assert driver_problems("{language: zpl, transport: usb, vendor_id: 0a5f}")[0].startswith("printer.driver: ")
    brother = "{language: brother_ql, transport: tcp, host: 127.0.0.1"
    assert driver_problems(brother + ", model: QL-9}")[0].startswith("printer.driver: unknown Brother model 'QL-9'")
    assert driver_problems(brother + ", label: {width_mm: 102, height_mm: 150, dpi: 300}}") == [
        "printer.driver: QL-820NWB cannot print 102 mm labels (only QL-1050, QL-1060N, QL-1100, QL-1100NWB, QL-1115NWB)"
    ]
    assert driver_problems(brother + ", label: {width_mm: 62, height_mm: 90, dpi: 300, die_cut: true}}")[0] == (
        "printer.driver: Brother has no 62x90 mm die-cut label; die-cut stock: 17x54, 17x87, 23x23, 29x42, 29x90, "
        "39x90, 39x48, 52x29, 54x29, 60x86, 62x29, 62x100, 102x51, 102x152, 103x164"
    )
    assert driver_problems("{language: zpl, transport: tcp, host: 127.0.0.1, model: QL-700}") == [
        "printer.driver: 'model' is for brother_ql and dymo printers; a zpl printer says its own model"
    ]
    dymo = "{language: dymo, transport: tcp, host: 127.0.0.1"
    assert driver_problems(dymo + ", model: LabelWriter 999}")[0].startswith(
        "printer.driver: unknown DYMO model 'LabelWriter 999'; known: LabelWriter 400,"
    )
    assert driver_problems("{language: dymo, transport: serial, device: /dev/ttyUSB0}") == [
        "printer.driver: a DYMO LabelWriter is reached over 'usb' or 'tcp', not 'serial'"
    ]
    config = load_config(write(tmp_path, BASE.replace("{language: sim, transport: sim}", dymo + ", model: 5XL}")))
    assert (config.printer.driver.model, config.printer.driver.label.width_mm) == ("5XL", 56)
    good = brother + ", model: QL-700, label: {width_mm: 62, height_mm: 100, dpi: 300, die_cut: true}}"
    config = load_config(write(tmp_path, BASE.replace("{language: sim, transport: sim}", good)))
    assert (config.printer.driver.model, config.printer.driver.label.die_cut) == ("QL-700", True)


def test_a_field_of_another_transport_is_refused_even_at_its_default(tmp_path: Path) -> None:
    driver = "{language: zpl, transport: serial, device: /dev/ttyS0, port: 9100}"
    assert problems(write(tmp_path, BASE.replace("{language: sim, transport: sim}", driver))) == [
        "printer.driver: port belong(s) to transport 'tcp', not 'serial'"
    ]


def test_redis_config_parse_checks_what_the_constructor_trusts() -> None:
    config = RedisConfig.parse({"cluster": {"nodes": ["10.0.0.5:7000"]}})
    assert config.mode == "cluster" and config.cluster == ClusterConfig(nodes=["10.0.0.5:7000"])
    with pytest.raises(Invalid) as info:
        RedisConfig.parse({"url": "http://h/0", "cluster": {"nodes": ["10.0.0.5"]}, "connect_timeout": 0})
    assert info.value.problems == [
        "url: must start with redis://, rediss:// (TLS) or unix:// (two slashes) (got 'http://h/0')",
        "connect_timeout: must be > 0 (got 0)",
        "cluster.nodes: '10.0.0.5' must be host:port, e.g. 10.0.0.5:26379",
    ]


def test_a_directory_or_unreadable_file_as_config_exits_78_not_a_usage_error(tmp_path: Path) -> None:
    # A path through a regular file cannot be opened even by root (tests may run as root, where mode 000 reads fine).
    unreadable = write(tmp_path, BASE) / "agent.yaml"
    cases = [(tmp_path, "is a directory"), (unreadable, "cannot read")]
    for path, said in cases:
        for args in (("check-config", str(path)), ("run", "-c", str(path)), ("status", "-c", str(path))):
            result = run_cli(*args)
            assert result.returncode == EXIT_CONFIG, (args, result.stderr)
            assert str(path) in result.stderr and said in result.stderr
            assert "Traceback" not in result.stderr


def test_a_huge_config_is_refused_by_size_and_problems_are_bounded(tmp_path: Path) -> None:
    huge = tmp_path / "huge.yaml"
    huge.write_text(BASE + "".join(f"junk{i}: {i}\n" for i in range(200_000)), encoding="utf-8")
    result = run_cli("check-config", str(huge))
    assert result.returncode == EXIT_CONFIG and "larger than" in result.stderr
    many = write(tmp_path, BASE + "".join(f"junk{i}: {i}\n" for i in range(500)))
    result = run_cli("check-config", str(many))
    assert result.returncode == EXIT_CONFIG
    assert result.stderr.count("unknown field") == 20 and "480 more not shown" in result.stderr
    hostile = write(tmp_path, BASE + '"evil\\r\\e[2J": 1\n')
    result = run_cli("check-config", str(hostile))
    assert result.returncode == EXIT_CONFIG and "evil\\x0d\\x1b[2J: unknown field" in result.stderr
    assert "\x1b" not in result.stderr and "\r" not in result.stderr


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("redis:/127.0.0.1:6390", "must start with redis://"),  # redis-py would read this as localhost:6379
        ("redis:///0", "names no host"),
        ("redis://127.0.0.1:63a0", "has a port that is not a number"),
        ("redis://127.0.0.1:", "has a port that is not a number"),
        ("redis://127.0.0.1:6390/db", "the path must be a database number"),
        ("unix:/run/redis.sock", "must start with"),
    ],
)
def test_a_malformed_redis_url_is_refused_never_another_address(url: str, why: str) -> None:
    with pytest.raises(Invalid) as info:
        RedisConfig.parse({"url": url})
    assert info.value.problems[0].startswith("url: " + why)


def test_the_cli_refuses_a_malformed_redis_url() -> None:
    from click.testing import CliRunner

    from cli.main import main

    result = CliRunner().invoke(main, ["status", "--redis", "redis:/127.0.0.1:6390", "--venue", "v"])
    assert result.exit_code == 2 and "--redis: must start with redis://" in result.output
    assert "Traceback" not in result.output


def test_a_journal_whose_directory_is_missing_or_not_a_directory_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-dir" / "hall-a-1.journal"
    assert problems(write(tmp_path, BASE + f"journal: {missing}\n")) == [
        f"journal: directory {missing.parent} does not exist (badge-agent setup creates it; or: sudo install -d -m "
        f"0750 -o badge-agent -g badge-agent {missing.parent})"
    ]
    (tmp_path / "a-file").write_text("")
    assert problems(write(tmp_path, BASE + f"journal: {tmp_path / 'a-file' / 'j'}\n")) == [
        f"journal: {tmp_path / 'a-file'} is not a directory"
    ]


def test_a_journal_directory_on_a_read_only_disk_is_named(tmp_path: Path) -> None:
    """A failing SD card is remounted read-only: here a read-only bind mount of the journal's directory, in a mount
    namespace of the test's own (root may write anything else, so the mode bits alone would not tell)."""
    folder = tmp_path / "state"
    folder.mkdir()
    config = write(tmp_path, BASE + f"journal: {folder / 'hall-a-1.journal'}\n")
    script = (
        f"mount --bind {folder} {folder} && mount -o remount,bind,ro {folder} && "
        f"exec {sys.executable} -m agent check-config {config}"
    )
    result = subprocess.run(["unshare", "-m", "sh", "-c", script], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == EXIT_CONFIG, result.stdout + result.stderr
    assert f"journal: {folder} cannot be written (read-only disk" in result.stderr, result.stderr
