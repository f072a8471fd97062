"""Settings: each from its keyword, else its ``TRACEBOX_*`` variable, else its default;
read as its type, checked against its bounds, and refused with a message naming it."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tracebox.config import ENV_PREFIX, Settings, SettingsError
from tracebox.server import export_settings


@pytest.fixture(autouse=True)
def no_tracebox_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith(ENV_PREFIX)]:
        monkeypatch.delenv(name)


def test_a_keyword_wins_over_the_environment_which_wins_over_the_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert Settings().port == Settings.port == 8000
    monkeypatch.setenv("TRACEBOX_PORT", "9000")
    assert Settings().port == 9000
    assert Settings(port=9001).port == 9001


@pytest.mark.parametrize(
    ("name", "text", "value"),
    [
        ("workers", " 3 ", 3),
        ("workers", "2.0", 2),
        ("max_event_bytes", "1_048_576", 1_048_576),
        ("spool_commit_interval_ms", "2.5", 2.5),
        ("spool_commit_interval_ms", "4", 4.0),
        ("digest_prepare_process", "False", False),  # as export_settings writes it
        ("digest_prepare_process", "off", False),
        ("external_allow_local_network", "YES", True),
        ("external_allow_local_network", "1", True),
        ("data_dir", "/srv/tracebox", Path("/srv/tracebox")),
        ("smtp_security", "tls", "tls"),
        ("database_url", "", ""),
    ],
)
def test_the_environment_is_read_as_each_setting_s_type(
    monkeypatch: pytest.MonkeyPatch, name: str, text: str, value: object
) -> None:
    monkeypatch.setenv(ENV_PREFIX + name.upper(), text)
    read = getattr(Settings(), name)
    assert read == value and type(read) is type(value)


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("port", "abc", "TRACEBOX_PORT='abc': not an integer"),
        ("port", "", "TRACEBOX_PORT='': not an integer"),
        ("workers", "1.5", "TRACEBOX_WORKERS='1.5': not an integer"),
        ("workers", "0", "TRACEBOX_WORKERS='0': must be >= 1"),
        ("health_max_lag_seconds", "0", "TRACEBOX_HEALTH_MAX_LAG_SECONDS='0': must be > 0"),
        ("background_nice", "20", "TRACEBOX_BACKGROUND_NICE='20': must be <= 19"),
        ("digest_prepare_process", "maybe", "'maybe': not true or false"),
        ("smtp_security", "ssl", "'ssl': must match ^(starttls|tls|none)$"),
    ],
)
def test_a_bad_value_in_the_environment_names_its_variable(
    monkeypatch: pytest.MonkeyPatch, name: str, text: str, message: str
) -> None:
    monkeypatch.setenv(ENV_PREFIX + name.upper(), text)
    with pytest.raises(SettingsError) as refused:
        Settings()
    assert message in str(refused.value)


def test_keywords_are_checked_as_the_environment_is() -> None:
    assert Settings(workers=2.0).workers == 2
    assert Settings(data_dir="x").data_dir == Path("x")
    assert Settings(key_cache_seconds=1).key_cache_seconds == 1.0
    for bad, message in [
        ({"workers": 0}, "workers=0: must be >= 1"),
        ({"workers": True}, "workers=True: not an integer"),
        ({"host": 1}, "host=1: not a string"),
        ({"bogus": 1, "other": 2}, "unknown setting(s): bogus, other"),
    ]:
        with pytest.raises(SettingsError) as refused:
            Settings(**bad)
        assert message in str(refused.value)


def test_a_secret_is_neither_shown_nor_quoted(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = Settings(
        smtp_password="hunter2",
        secret_key="s3cret",
        root_password="pw!",
        database_url="postgresql://u:dbpass@db/tracebox",
    )
    assert settings.smtp_password == "hunter2"
    for value in ("hunter2", "s3cret", "pw!", "dbpass"):
        assert value not in repr(settings)
    with pytest.raises(SettingsError) as refused:
        Settings(smtp_password=12345)
    assert "12345" not in str(refused.value) and "smtp_password" in str(refused.value)


def test_exported_settings_are_read_back_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """serve puts every setting in the environment; its workers build the same Settings."""
    settings = Settings(
        data_dir=tmp_path,
        digest_prepare_process=False,
        alert_retry_period_hours=0.2 / 3600,
        external_allow_local_network=True,
        smtp_password="pw",
    )
    with monkeypatch.context() as env:
        # export_settings writes os.environ itself: each variable is registered here
        # (deleted, though absent) so that leaving the context removes what it wrote.
        for name in dataclasses.asdict(settings):
            env.delenv(ENV_PREFIX + name.upper(), raising=False)
        export_settings(settings)
        assert Settings() == settings
    assert dataclasses.replace(settings, workers=3) == Settings(
        **{**dataclasses.asdict(settings), "workers": 3}
    )


def test_the_cli_refuses_a_bad_setting_with_a_clear_message(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tracebox", "project", "list"],
        env={"PATH": "/usr/bin:/bin", "TRACEBOX_DATA_DIR": str(tmp_path), "TRACEBOX_PORT": "x"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == "tracebox: bad setting: TRACEBOX_PORT='x': not an integer"
    assert "Traceback" not in done.stderr


def test_the_digest_s_process_imports_no_pydantic() -> None:
    """Settings are read without pydantic: the digest's process loads no part of it
    (~9 MB resident, issue 10)."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, tracebox.supervisor.host, tracebox.digest.worker; "
            "print(sorted(m for m in sys.modules if m.startswith('pydantic')))",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.strip() == "[]"
