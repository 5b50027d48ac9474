"""The live status page in a real browser: Debian's headless Chromium, driven by Selenium.

A real ``brudno serve`` with a token and ``--metrics-port``; a TCP session plays moves and
searches while the browser logs in through the page's form and watches.  Checked: the login
(and that neither the page nor its cookie holds the token; the cookie is HttpOnly,
SameSite=Strict and expires), the session's card with a board picture, and that depth and
nodes/s appear and change without a reload, and the board changes when the position does;
then the logout button, whose POST revokes the cookie.  A screenshot is saved
(``BRUDNO_SCREENSHOT`` names where, else the test's temporary directory) for a person to look at.

``scripts/test`` installs ``chromium`` and ``chromium-driver``; a missing browser fails this test,
it never skips it.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from tests.support.http_helpers import HTTP_LISTENING, get
from tests.support.tcp_helpers import HANG_TIMEOUT, TcpClient, env_without_token, serve_process

T = TypeVar("T")
TOKEN = "page-secret-5d21e8"
CHROMIUM = ("chromium", "/usr/bin/chromium")
CHROMEDRIVER = ("chromedriver", "/usr/bin/chromedriver")


def _find(candidates: tuple[str, ...]) -> str:
    for name in candidates:
        found = shutil.which(name) or (name if os.access(name, os.X_OK) else None)
        if found:
            return found
    pytest.fail(
        f"{candidates[0]} is not installed (Debian: apt-get install chromium chromium-driver; "
        "scripts/test does)"
    )


@pytest.fixture
def browser() -> Iterator[WebDriver]:
    options = Options()
    options.binary_location = _find(CHROMIUM)
    for argument in (
        "--headless=new",
        "--no-sandbox",  # as root in a container
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1200,900",
    ):
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options, service=Service(_find(CHROMEDRIVER)))
    driver.set_page_load_timeout(HANG_TIMEOUT)
    try:
        yield driver
    finally:
        driver.quit()


async def _until(probe: Callable[[], T | None], what: str) -> T:
    """Poll the browser (off the event loop: the server's client runs on it) until ``probe``
    gives something; fails, never passes, after the hang timeout."""
    async with asyncio.timeout(HANG_TIMEOUT):
        while True:
            found = await asyncio.to_thread(probe)
            if found is not None:
                return found
            await asyncio.sleep(0.1)
    raise AssertionError(what)  # pragma: no cover (the timeout raises first)


def _card_text(driver: WebDriver, field: str) -> str | None:
    cards = driver.find_elements(By.CSS_SELECTOR, "article.card")
    if not cards:
        return None
    text = cards[0].find_element(By.CLASS_NAME, field).text.strip()
    return text if text and text != "\u2013" else None  # the page's dash for "none yet"


async def test_status_page_shows_a_searching_session_live(
    brudno: list[str], browser: WebDriver, tmp_path: Path
) -> None:
    async with serve_process(
        brudno, "--metrics-port", "0", env=env_without_token(BRUDNO_TOKEN=TOKEN)
    ) as server:
        base = f"http://127.0.0.1:{(await server.wait_for_log(HTTP_LISTENING.pattern))[2]}/"
        client = await TcpClient.open(server.port, token=TOKEN)
        await client.send("position startpos", "go movetime 200")
        _, first = await client.bestmove()

        # The login form, then the page; the token is nowhere in what the browser holds.
        await asyncio.to_thread(browser.get, base)
        assert browser.title == "Brudno status: log in"
        await asyncio.to_thread(browser.find_element(By.ID, "token").send_keys, "wrong")
        await asyncio.to_thread(browser.find_element(By.ID, "submit").click)
        # A click returns before the form's answer has loaded: wait for it, never race it.
        await _until(
            lambda: True if "Wrong token." in browser.page_source else None,
            "the login form to say the token was wrong",
        )
        await asyncio.to_thread(browser.find_element(By.ID, "token").send_keys, TOKEN)
        await asyncio.to_thread(browser.find_element(By.ID, "submit").click)
        await _until(
            lambda: True if browser.title == "Brudno status" else None, "the page after login"
        )
        assert all(TOKEN not in str(cookie) for cookie in browser.get_cookies())
        (login,) = browser.get_cookies()
        assert login["httpOnly"] and login["sameSite"] == "Strict" and "expiry" in login

        # A search runs: the card appears, then depth and nodes/s change as it deepens.
        board_before = await _until(
            lambda: browser.find_element(By.CSS_SELECTOR, "article.card .board img").get_attribute(
                "src"
            ),
            "the board of the session",
        )
        await client.send(f"position startpos moves {first}", "go infinite")
        depth = await _until(lambda: _card_text(browser, "depth"), "a depth")
        nps = await _until(lambda: _card_text(browser, "nps"), "nodes/s")
        await _until(
            lambda: True if _card_text(browser, "depth") not in (None, depth) else None,
            "the depth to change",
        )
        await _until(
            lambda: True if _card_text(browser, "nps") not in (None, nps) else None,
            "nodes/s to change",
        )
        assert await asyncio.to_thread(lambda: _card_text(browser, "state")) == "searching"
        board_after = await _until(
            lambda: (
                src
                if (
                    src := browser.find_element(
                        By.CSS_SELECTOR, "article.card .board img"
                    ).get_attribute("src")
                )
                != board_before
                else None
            ),
            "the board to show the new position",
        )
        assert "chess" in (board_after or "")
        loaded = await asyncio.to_thread(
            browser.execute_script,
            "const i = document.querySelector('article.card .board img');"
            "return i.complete && i.naturalWidth > 0;",
        )
        assert loaded, "the board picture did not load"
        assert "Fleet" not in browser.find_element(By.TAG_NAME, "main").text
        assert TOKEN not in browser.page_source

        shot = Path(os.environ.get("BRUDNO_SCREENSHOT", tmp_path / "status-page.png"))
        assert await asyncio.to_thread(browser.save_screenshot, str(shot))
        assert shot.stat().st_size > 10_000

        # Logging out is the page's form POST: back to the login form, and the session the
        # cookie named is revoked on the server, not merely forgotten by the browser.
        await asyncio.to_thread(browser.find_element(By.ID, "logout").click)
        await _until(
            lambda: True if browser.title == "Brudno status: log in" else None,
            "the login form after logging out",
        )
        held = {"Cookie": f"{login['name']}={login['value']}"}
        assert (await get(f"{base}status.json", headers=held)).status == 401

        await client.send("stop")
        await client.bestmove()
        await client.close()
        assert await server.stop() == 0
