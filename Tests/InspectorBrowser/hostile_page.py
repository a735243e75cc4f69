#!/usr/bin/env python3
"""Opens one page Kakapo serves for the app (a replayed HTML answer) in a real headless Chromium and prints what
the page's own script managed to do.

Run by Tests/KakapoCLITests/HostilePageBrowserTests.swift with one argument, the page's URL. The page's script
(written into the cassette by the test) tries the admin API every way a page can: same-origin JSON requests to the
proxy port's /__kakapo/*, and cross-origin ones to the admin listener (CORS, and simple requests that need no
preflight). When it is done it puts `DONE {json}` in document.title; this driver prints that JSON on one line,
`RESULT {...}`, and exits 0, or exits 2 when the page never finished.

Selenium is handed /usr/bin/chromedriver (tools/browser.sh installs it with Debian's chromium).
"""

import json
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

CHROMEDRIVER = "/usr/bin/chromedriver"
CHROMIUM = "/usr/bin/chromium"
# A guard against a hang only: the page's requests take milliseconds.
WAIT = 60.0


def main():
    url = sys.argv[1]
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--no-first-run",
                     "--disable-extensions"]:
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    try:
        driver.get(url)
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            title = driver.title or ""
            if title.startswith("DONE "):
                print("RESULT " + json.dumps(json.loads(title[5:])), flush=True)
                return 0
            time.sleep(0.1)
        print(f"the page did not finish within {WAIT} s; its title is {driver.title!r}", file=sys.stderr)
        return 2
    finally:
        driver.quit()


if __name__ == "__main__":
    sys.exit(main())
