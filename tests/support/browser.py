"""Headless Chromium for the board's test, driven by Selenium: found or installed (Debian, PyPI), never skipped.

Needs Debian's ``chromium`` and ``chromium-driver`` (the driver matches the browser's version exactly, so nothing
is downloaded at run time) and ``selenium`` from PyPI. This machine's network is closed: Chromium is started without
any of its background fetches.
"""

from __future__ import annotations

import importlib
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
PHONE = (390, 844)  # CSS pixels of a common phone held upright


def _apt_install(*packages: str) -> None:
    if shutil.which("apt-get") is None:
        return
    cmd = ["apt-get", "install", "-y", "-qq", *packages]
    env = {"DEBIAN_FRONTEND": "noninteractive", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
    if subprocess.run(cmd, capture_output=True, timeout=900, check=False, env=env).returncode != 0:
        subprocess.run(["apt-get", "update", "-qq"], capture_output=True, timeout=600, check=False, env=env)
        subprocess.run(cmd, capture_output=True, timeout=900, check=False, env=env)


def chromium_and_driver() -> tuple[str, str]:
    browser, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if browser is None or driver is None:
        _apt_install("chromium", "chromium-driver")
        browser, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if browser is None or driver is None:
        pytest.fail(
            "the board test needs Debian's chromium and chromium-driver: apt-get install chromium chromium-driver"
        )
    return browser, driver


def selenium_webdriver() -> Any:
    try:
        return importlib.import_module("selenium.webdriver")
    except ImportError:
        pytest.fail("the board test needs selenium: scripts/setup --dev installs it (pip install -e '.[dev]')")


def start_chromium(profile: Path) -> Any:
    """A headless Chromium at phone size with a fresh profile. Blocking: call it from a thread."""
    browser, driver = chromium_and_driver()
    webdriver = selenium_webdriver()
    service_mod = importlib.import_module("selenium.webdriver.chrome.service")
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.add_argument(f"--window-size={PHONE[0]},{PHONE[1]}")
    # An explicit driver path: Selenium Manager (which would try to download one) is never asked.
    service = service_mod.Service(executable_path=driver)
    return webdriver.Chrome(options=options, service=service)
