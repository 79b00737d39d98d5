"""``hermes-store browse`` in a real headless Chromium: the search box finds a planted message and a
canned query renders. Skipped (with the reason shown by ``-ra``) only where Chromium, chromedriver
or selenium cannot be had; ``scripts/setup_chromium.sh`` installs Debian's packages."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from eco_helpers import PLANTED, TOKENS, build_store, start_browse, stop

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
SCREENSHOT = os.environ.get("HERMES_STORE_SCREENSHOT")  # set to write the README screenshot
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage", "--window-size=1100,900")


def _missing() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install 'hermes_store[test]')"
    if not CHROMIUM or not CHROMEDRIVER:
        return "Debian's chromium/chromium-driver are not installed (run scripts/setup_chromium.sh as root)"
    try:
        import datasette  # noqa: F401
    except ImportError:
        return "datasette is not installed (pip install 'hermes_store[browse]')"
    return None


MISSING = _missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=f"BROWSER TEST SKIPPED: {MISSING}")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    home = tmp_path_factory.mktemp("browser") / "home"
    home.mkdir()
    build_store(home)
    proc, base = start_browse(home, home.parent / "datasette.log")
    yield base
    stop(proc)


@pytest.fixture(scope="module")
def signed_in(site, browser):
    """The browser opened the printed URL once: from then on its cookie lets it navigate."""
    _load(browser, f"{site}/?token={TOKENS[site]}", "hermes_store")
    return site


@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="hermes-store-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _load(browser, url: str, text: str) -> None:
    """Open ``url`` and wait until the page shows ``text`` (pages render after navigation returns)."""
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(url)
    WebDriverWait(browser, 30).until(lambda d: text in d.page_source)


def test_without_the_printed_url_the_browser_is_refused(site, browser):
    browser.delete_all_cookies()
    _load(browser, f"{site}/hermes_store/messages", "open the URL")
    assert "rows-and-columns" not in browser.page_source


def test_cookie_is_http_only_and_strict(signed_in, browser):
    cookies = [c for c in browser.get_cookies() if c["name"].startswith("hermes_store_browse_")]
    assert len(cookies) == 1 and cookies[0]["httpOnly"] is True and cookies[0]["sameSite"] == "Strict"
    assert browser.execute_script("return document.cookie") == ""  # not readable by page scripts


def test_search_box_finds_the_planted_message(signed_in, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    site = signed_in
    _load(browser, f"{site}/hermes_store/messages", "rows-and-columns")
    all_rows = browser.find_elements(By.CSS_SELECTOR, "table.rows-and-columns tbody tr")
    assert len(all_rows) > 1
    box = browser.find_element(By.CSS_SELECTOR, "input[name=_search]")
    box.send_keys(PLANTED)
    box.submit()
    WebDriverWait(browser, 30).until(lambda d: f'search matches "{PLANTED}"' in d.page_source)
    rows = browser.find_elements(By.CSS_SELECTOR, "table.rows-and-columns tbody tr")
    assert "_search=" + PLANTED in browser.current_url
    assert len(rows) == 1 and PLANTED in rows[0].text
    if SCREENSHOT:
        Path(SCREENSHOT).parent.mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(SCREENSHOT)


def test_canned_query_renders(signed_in, browser):
    from selenium.webdriver.common.by import By

    site = signed_in
    _load(browser, f"{site}/hermes_store", "Facts by trust")
    links = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "a")]
    assert {"Memory history timeline", "Facts by trust", "Sessions per day per source"} <= set(links)
    _load(browser, f"{site}/hermes_store/facts_by_trust", "kestrel")
    assert "Facts by trust" in browser.find_element(By.TAG_NAME, "h1").text
    rows = browser.find_elements(By.CSS_SELECTOR, "table.rows-and-columns tbody tr")
    assert len(rows) == 2 and "kestrel" in rows[0].text + rows[1].text
