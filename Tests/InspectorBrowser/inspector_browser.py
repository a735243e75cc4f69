#!/usr/bin/env python3
"""Drives the inspector (GET /__kakapo/ui) in a real headless Chromium against a running kakapo.

Run by Tests/KakapoCLITests/InspectorBrowserTests.swift, which starts the built `kakapo serve` (mode passthrough,
in front of a local upstream, with a routes file) and opens a cassette session in mode none, then passes one
JSON argument:

    {"base": "http://127.0.0.1:PORT", "session": "16 hex digits", "output": "/abs/folder",
     "saveCassette": "live.json"}                  (add "token": "..." for the --admin-token checks only)

Traffic (made with curl, as a user would): requests without the session header are forwarded live; requests
with it replay the session's cassette, whose recordings are GET /users?page=1, POST /search
{"user":{"name":"Ada"},"limit":10} and a stream GET /events/feed, so GET /users?page=2 and a POST /search naming
Grace are misses; GET /hello/:name is a route and /todos a Store resource of the routes file.

Prints one line per check, `CHECK {"check": "a", "description": ..., "ok": true, "message": "...", "seconds": 0.1}`
and `IDS {...}` (the journal id of each request it made), and exits 1 when a check failed. On a failed check it
saves a screenshot (fail-CHECK.png) and the page's HTML (fail-CHECK.html) to the output folder; it always saves
console.log (the browser's log) and inspector.png (the whole list with a miss open: the docs' screenshot,
copied by tools/inspector-screenshot.sh).

Rows, filters and panes are found by the data-testid hooks listed at the top of
Sources/KakapoInspector/Web/app.js. Selenium is handed /usr/bin/chromedriver (tools/browser.sh installs it with
Debian's chromium), so it never downloads a driver.
"""

import http.client
import json
import subprocess
import sys
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

CHROMEDRIVER = "/usr/bin/chromedriver"
CHROMIUM = "/usr/bin/chromium"
CURL = "/usr/bin/curl"
WINDOW = (1440, 900)
# How long a step may wait for the page (a loaded 2-core machine); the one-second check has its own bound.
WAIT = 8.0
# What the note requests and saved exchanges carry, to find them by (body search, redaction).
NEEDLE = "needle-7f3a"
TOKEN = "sk_live_0123456789abcdefghij"
PASSWORD = "hunter2-kakapo"
HOSTILE_NOTE = "it's \"quoted\" $(false) `x` \\ & ; ok"


class CheckFailed(Exception):
    """A check's expectation did not hold; the message says what was seen."""


def expect(condition, message):
    if not condition:
        raise CheckFailed(message)


def by_testid(name):
    return (By.CSS_SELECTOR, f'[data-testid="{name}"]')


class Inspector:
    def __init__(self, config):
        self.base = config["base"].rstrip("/")
        self.session = config["session"]
        self.output = Path(config["output"])
        self.save_cassette = config.get("saveCassette", "")
        # With --admin-token: the token the page is given, and the driver's own admin calls send.
        self.token = config.get("token", "")
        # The inspector is on the admin listener, which health on the proxy port names (a client that is not
        # a page may ask there); the proxy port's /__kakapo/ui redirects to it (check "page").
        health = urllib.request.Request(
            self.base + "/__kakapo/health", headers={"Authorization": f"Bearer {self.token}"} if self.token else {})
        with urllib.request.urlopen(health, timeout=10) as answer:
            admin_port = json.load(answer)["listeners"]["admin"]
        self.ui = f"http://127.0.0.1:{admin_port}"
        self.output.mkdir(parents=True, exist_ok=True)
        self.failed = False
        self.console = []
        self.ids = {}
        self.driver = None
        # Entries journaled before the driver started (none, with a fresh kakapo) are not the driver's.
        self.baseline = 0

    # -- the browser ------------------------------------------------------------------------------------------

    def start_browser(self):
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for argument in [
            "--headless=new",
            "--no-sandbox",
            "--disable-dev-shm-usage",
            "--disable-gpu",
            f"--window-size={WINDOW[0]},{WINDOW[1]}",
            "--force-device-scale-factor=1",
            "--no-first-run",
            "--disable-extensions",
            "--lang=en-US",
        ]:
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
        # The viewport itself, whatever the window's frame takes: the screenshot is exactly WINDOW.
        self.driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": WINDOW[0], "height": WINDOW[1], "deviceScaleFactor": 1, "mobile": False},
        )
        # "Copy as curl" writes to the clipboard: let it, so a refused write is not what the console shows.
        try:
            self.driver.execute_cdp_cmd(
                "Browser.grantPermissions",
                {"origin": self.ui, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]},
            )
        except WebDriverException:
            pass

    def collect_console(self):
        try:
            self.console.extend(self.driver.get_log("browser"))
        except WebDriverException:
            pass

    def wait(self, what, condition, timeout=WAIT, interval=0.03):
        """Polls `condition` until it returns something truthy; fails with `what` and the last value."""
        deadline = time.monotonic() + timeout
        last = None
        while True:
            try:
                last = condition()
                if last:
                    return last
            except (StaleElementReferenceException, CheckFailed):
                pass
            if time.monotonic() > deadline:
                raise CheckFailed(f"{what} (waited {timeout:g} s; last seen: {last!r})")
            time.sleep(interval)

    def element(self, testid, timeout=WAIT):
        return self.wait(
            f'no displayed element data-testid="{testid}"',
            lambda: next((e for e in self.driver.find_elements(*by_testid(testid)) if e.is_displayed()), None),
            timeout,
        )

    def displayed_rows(self):
        """The list's displayed rows, as [data-id or None, method, path, text]: a virtualized list keeps hidden
        rows for reuse, and its cells are read by their classes (c-method, c-path) when it has them."""
        script = """
            return Array.from(document.querySelectorAll('[data-testid="row"]'))
                .filter(row => row.offsetParent !== null)
                .map(row => [row.getAttribute('data-id'), row.querySelector('.c-method')?.textContent ?? '',
                             row.querySelector('.c-path')?.textContent ?? '', row.textContent]);
        """
        return self.driver.execute_script(script)

    def rows(self):
        """The list's displayed rows that carry a data-id, as {id: text}."""
        return {int(i): text for i, _, _, text in self.displayed_rows() if i and i.isdigit()}

    def shown_names(self):
        """Which of the test's requests the list shows, by what the rows say (method and path), not by data-id."""
        shown = set()
        for _, method, path, text in self.displayed_rows():
            for name, spec in REQUESTS.items():
                if (method, path) == (spec["method"], spec["target"]) if path else spec["target"] in text:
                    shown.add(name)
        return shown

    def row(self, name):
        ident = self.ids[name]
        return self.wait(
            f"no row for {name} (id {ident}) in the list",
            lambda: next(
                (
                    e
                    for e in self.driver.find_elements(By.CSS_SELECTOR, f'[data-testid="row"][data-id="{ident}"]')
                    if e.is_displayed()
                ),
                None,
            ),
        )

    def open_detail(self, name):
        ident = str(self.ids[name])
        self.row(name).click()
        return self.wait(
            f"the detail of {name} (id {ident}) did not open on a click on its row",
            lambda: next(
                (e for e in self.driver.find_elements(*by_testid("detail"))
                 if e.is_displayed() and e.get_attribute("data-id") == ident),
                None,
            ),
        )

    def set_filter(self, testid, value):
        """Sets a filter control, whatever it is: a <select> (by value or label), or a text input."""
        control = self.element(testid)
        if control.tag_name.lower() == "select":
            select = Select(control)
            if value == "":
                select.select_by_index(0)
                return
            wanted = value.lower()
            for option in select.options:
                label = (option.get_attribute("value") or "").lower(), option.text.strip().lower()
                if wanted in label or any(part.startswith(wanted) for part in label if part):
                    select.select_by_visible_text(option.text)
                    return
            raise CheckFailed(
                f'data-testid="{testid}" has no option {value!r}: '
                + ", ".join(repr(o.get_attribute("value")) for o in select.options)
            )
        control.click()
        control.send_keys(Keys.CONTROL, "a")
        control.send_keys(Keys.DELETE)
        if value:
            control.send_keys(value)

    def clear_filters(self):
        for testid in ["filter-text", "filter-source", "filter-status", "filter-method", "filter-host", "body-search"]:
            if self.driver.find_elements(*by_testid(testid)):
                self.set_filter(testid, "")

    def close_detail(self):
        buttons = [e for e in self.driver.find_elements(*by_testid("detail-close")) if e.is_displayed()]
        if buttons:
            buttons[0].click()
        else:
            ActionChains(self.driver).send_keys(Keys.ESCAPE).perform()
        self.wait("the detail did not close", lambda: not any(
            e.is_displayed() for e in self.driver.find_elements(*by_testid("detail"))))

    def keys(self, *keys):
        ActionChains(self.driver).send_keys(*keys).perform()

    def active_testid(self):
        return self.driver.execute_script("return document.activeElement?.getAttribute('data-testid') ?? ''")

    def save_failure(self, check):
        try:
            self.driver.save_screenshot(str(self.output / f"fail-{check}.png"))
            (self.output / f"fail-{check}.html").write_text(self.driver.page_source)
        except WebDriverException:
            pass

    # -- Kakapo, through curl and the admin API --------------------------------------------------------------

    def curl(self, name):
        spec = REQUESTS[name]
        arguments = [CURL, "-sS", "--max-time", "10", "-o", "/dev/null", "-w", "%{http_code}", "-X", spec["method"]]
        if spec.get("session"):
            arguments += ["-H", f"X-Kakapo-Session: {self.session}"]
        for header in spec.get("headers", []):
            arguments += ["-H", header]
        if "body" in spec:
            arguments += ["--data-binary", spec["body"]]
        arguments.append(self.base + spec["target"])
        done = subprocess.run(arguments, capture_output=True, text=True, timeout=20)
        expect(done.returncode == 0, f"curl for {name} failed: {done.stderr}")
        return int(done.stdout or 0)

    def admin(self, path, token=None):
        token = self.token if token is None else token
        request = urllib.request.Request(self.base + path, headers={"Authorization": f"Bearer {token}"} if token else {})
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, dict(answer.headers), answer.read()

    def admin_json(self, path):
        return json.loads(self.admin(path)[2])

    def journal(self):
        return self.admin_json("/__kakapo/requests").get("requests", [])

    @staticmethod
    def entry_target(entry):
        if "target" in entry:
            return entry["target"]
        parts = urllib.parse.urlsplit(entry.get("url", ""))
        return parts.path + ("?" + parts.query if parts.query else "")

    def find_entry(self, method, target, after=0):
        """The journal id of the first request `method target` with an id above `after`, once journaled."""

        def lookup():
            for entry in self.journal():
                if (
                    isinstance(entry.get("id"), int)
                    and entry["id"] > after
                    and entry.get("method") == method
                    and self.entry_target(entry) == target
                ):
                    return entry["id"]
            return None

        return self.wait(f"{method} {target} is not in GET /__kakapo/requests with an id", lookup, timeout=5)

    def make(self, name):
        status = self.curl(name)
        spec = REQUESTS[name]
        expect(status == spec["status"], f"{name} ({spec['method']} {spec['target']}) answered {status}")
        self.ids[name] = self.find_entry(spec["method"], spec["target"], after=max(self.ids.values(), default=self.baseline))

    # -- the checks ------------------------------------------------------------------------------------------

    def run(self, check, description, body):
        started = time.monotonic()
        try:
            message = body() or "ok"
            ok = True
        except CheckFailed as error:
            ok, message = False, str(error)
        except Exception as error:  # A driver error is this check's failure, with where it happened.
            ok, message = False, f"{type(error).__name__}: {error}\n{traceback.format_exc(limit=4)}"
        self.collect_console()
        if not ok:
            self.failed = True
            self.save_failure(check)
            try:
                self.close_detail()
                self.clear_filters()
            except Exception:
                pass
        took = time.monotonic() - started
        print(
            "CHECK " + json.dumps({"check": check, "description": description, "ok": ok, "message": message,
                                   "seconds": round(took, 2)}),
            flush=True,
        )
        return ok

    def load(self):
        self.baseline = max((e["id"] for e in self.journal() if isinstance(e.get("id"), int)), default=0)
        status, headers, html = self.admin("/__kakapo/ui")
        policy = {k.lower(): v for k, v in headers.items()}.get("content-security-policy", "")
        for directive in ["default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'",
                          "frame-ancestors 'none'"]:
            expect(directive in policy, f"GET /__kakapo/ui: Content-Security-Policy {policy!r} lacks {directive}")
        text = html.decode("utf-8", "replace")
        expect("<script>" not in text.replace(" ", "").lower(), "index.html has an inline <script>")
        expect(" style=" not in text, "index.html has an inline style attribute")
        # Through the proxy port, as a user who knows only that: redirected to the admin listener.
        self.driver.get(self.base + "/__kakapo/ui")
        self.element("filter-text", timeout=10)
        expect(self.driver.current_url.startswith(self.ui + "/__kakapo/ui"),
               f"the proxy port's /__kakapo/ui did not lead to the admin listener {self.ui}: {self.driver.current_url}")
        # The page is ready once its events stream is open (a row for a request made before would come from
        # the backlog): check a measures the live path.
        status = self.element("connection-status")
        self.wait("the page's events stream did not open (connection-status never says live)",
                  lambda: "live" in status.text.lower())
        return f"loaded {len(text)} bytes of index.html under {policy!r}"

    def check_live_row(self):
        spec = REQUESTS["ping"]
        self.curl("ping")
        sent = time.monotonic()
        seen = self.wait(
            f"GET {spec['target']} made by curl did not appear in the list",
            lambda: next((i for i, text in self.rows().items() if i > self.baseline and "/live/ping" in text), None),
            timeout=5,
            interval=0.02,
        )
        latency = time.monotonic() - sent
        self.ids["ping"] = self.find_entry("GET", spec["target"], after=self.baseline)
        expect(seen == self.ids["ping"], f"the new row has data-id {seen}, the journal says {self.ids['ping']}")
        expect(latency <= 1.0, f"the row appeared {latency:.3f} s after curl finished (more than a second)")
        return f"the row appeared {latency * 1000:.0f} ms after curl finished"

    def make_traffic(self):
        if "ping" not in self.ids:  # Check a failed before it found its request.
            self.ids["ping"] = self.find_entry("GET", REQUESTS["ping"]["target"], after=self.baseline)
        for name in ["hit", "query-miss", "body-miss", "order", "not-found", "delete", "logo", "profile", "boom", "stream", "route", "todo"]:
            self.make(name)
        ids = self.ids.copy()
        self.wait(
            "not every request made is a row of the list",
            lambda: set(ids.values()) <= set(self.rows()) or None,
        )
        print("IDS " + json.dumps(self.ids), flush=True)
        return f"{len(ids)} requests listed"

    def check_miss(self):
        detail = self.open_detail("query-miss")
        nearest = self.element("miss-nearest")
        self.wait("the nearest recording (GET /users?page=1) is not shown", lambda: "/users" in nearest.text)

        def fields():
            return [e.text for e in self.driver.find_elements(*by_testid("miss-field")) if e.is_displayed()]

        texts = self.wait("no differing field (data-testid=miss-field) names the query parameter page",
                          lambda: (lambda t: t if any("page" in x for x in t) else None)(fields()))
        # A miss cannot be saved: it has no answer to keep.
        buttons = [b for b in detail.find_elements(*by_testid("save-cassette")) if b.is_displayed()]
        expect(all(not b.is_enabled() for b in buttons), "a miss offers an enabled 'save to cassette'")
        self.close_detail()
        self.open_detail("body-miss")
        self.element("miss-nearest")
        body_fields = self.wait(
            "no differing field names the JSON body field /user/name",
            lambda: (lambda t: t if any("name" in x for x in t) else None)(fields()),
        )
        self.close_detail()
        return f"query miss fields {texts}; body miss fields {body_fields}"

    def narrowed(self, what, expected):
        """Waits until the list shows exactly the requests named `expected` (of those the test made)."""
        shown = []

        def matches():
            shown[:] = sorted(self.shown_names())
            return set(shown) == set(expected)

        try:
            self.wait(what, matches)
        except CheckFailed:
            counts = self.driver.find_elements(*by_testid("row-count"))
            raise CheckFailed(
                f"{what}: the list shows {shown}, not {sorted(expected)} (the page says "
                f"{counts[0].text if counts else '?'!r})"
            ) from None

    def check_filters(self):
        cases = [
            ("filter-source", "miss", ["query-miss", "body-miss"]),
            ("filter-source", "cassette", ["hit", "stream"]),
            ("filter-source", "route", ["route"]),
            ("filter-source", "store", ["todo"]),
            ("filter-status", "4xx", ["query-miss", "body-miss", "not-found"]),
            ("filter-status", "5xx", ["boom"]),
            ("filter-method", "POST", ["body-miss", "order", "todo"]),
            ("filter-method", "DELETE", ["delete"]),
            ("filter-text", "orders", ["order", "delete"]),
            ("filter-host", "127.0.0.1", list(REQUESTS_MADE)),
            ("body-search", NEEDLE, ["order"]),
        ]
        for testid, value, expected in cases:
            self.set_filter(testid, value)
            self.narrowed(f'{testid} = "{value}"', expected)
            self.set_filter(testid, "")
            self.narrowed(f'{testid} cleared', list(REQUESTS_MADE))
        # Two filters at once narrow further.
        self.set_filter("filter-method", "GET")
        self.set_filter("filter-source", "upstream")
        self.narrowed("method GET and source upstream", ["ping", "not-found", "logo", "boom"])
        self.clear_filters()
        self.narrowed("every filter cleared", list(REQUESTS_MADE))
        return f"{len(cases) + 1} filters narrowed the list as expected"

    def check_rows_after_filters(self):
        """Rows that a filter hid and clearing it brought back are still the requests they show: each has the
        data-id of its request, and a click opens that request."""
        wrong = {}
        for ident, method, path, _ in self.displayed_rows():
            for name, spec in REQUESTS.items():
                if (method, path) == (spec["method"], spec["target"]) and ident != str(self.ids[name]):
                    wrong[name] = ident
        expect(not wrong, f"after the filters, rows show requests under another data-id (name: data-id): {wrong}")
        self.open_detail("order")
        self.close_detail()
        return "every row kept its data-id"

    def check_keyboard(self):
        self.driver.execute_script("document.activeElement?.blur()")
        self.keys("/")
        self.wait("/ did not put the focus on the URL filter", lambda: self.active_testid() == "filter-text")
        self.keys(Keys.ESCAPE)
        self.wait("Esc in the filter did not put the focus on the list",
                  lambda: self.active_testid() == "request-list")
        newest = sorted(self.rows(), reverse=True)
        expect(len(newest) > 1, f"the list shows too few rows for the keyboard: {newest}")
        chosen = str(newest[1])
        self.keys(Keys.HOME, "j")

        def selected():
            rows = self.driver.find_elements(By.CSS_SELECTOR, '[data-testid="row"][aria-selected="true"]')
            return [row.get_attribute("data-id") for row in rows]

        self.wait(f"Home then j did not select the second newest row ({chosen})", lambda: selected() == [chosen])
        self.keys(Keys.ENTER)
        self.wait(f"Enter did not open the detail of row {chosen}", lambda: any(
            e.is_displayed() and e.get_attribute("data-id") == chosen
            for e in self.driver.find_elements(*by_testid("detail"))))
        self.driver.execute_script("document.activeElement?.blur()")
        self.keys(Keys.ESCAPE)
        self.wait("Esc did not close the detail", lambda: not any(
            e.is_displayed() for e in self.driver.find_elements(*by_testid("detail"))))
        return f"/ focused the filter, Esc the list, Home j Enter opened {chosen}, Esc closed it"

    def check_curl(self):
        self.reload()
        self.open_detail("order")
        self.element("copy-curl").click()
        box = self.element("curl-command")
        command = self.wait(
            "the curl command box stayed empty",
            lambda: (box.get_attribute("value") or box.text or "").strip(),
        )
        (self.output / "curl-command.txt").write_text(command + "\n")
        expect(command.startswith("curl"), f"the command does not start with curl: {command}")
        self.close_detail()
        last = max(self.ids.values())
        done = subprocess.run(["sh", "-c", command + " -sS -o /dev/null --max-time 10"], capture_output=True,
                              text=True, timeout=20)
        expect(done.returncode == 0, f"running the copied command failed ({done.returncode}): {done.stderr}\n{command}")
        again = self.find_entry("POST", REQUESTS["order"]["target"], after=last)
        self.ids["order-again"] = again
        first = self.admin_json(f"/__kakapo/requests/{self.ids['order']}")
        second = self.admin_json(f"/__kakapo/requests/{again}")
        for key in ["method", "url"]:
            expect(first.get(key) == second.get(key), f"{key}: {first.get(key)!r} first, {second.get(key)!r} again")
        body_first = first.get("request", {}).get("body", {})
        body_second = second.get("request", {}).get("body", {})
        expect(body_first.get("text") == body_second.get("text") and body_first.get("text"),
               f"request body: {body_first!r} first, {body_second!r} again")

        def note(detail):
            return [v for k, v in detail.get("request", {}).get("headers", []) if k.lower() == "x-note"]

        expect(note(first) == note(second) == [HOSTILE_NOTE], f"X-Note: {note(first)} first, {note(second)} again")
        # The reproduction is live traffic the page lists too (it is not an admin request).
        self.wait("the reproduced request is not a row of the list", lambda: again in self.rows())
        return f"the copied command ({len(command)} characters) made request {again}, the same as {self.ids['order']}"

    def check_save(self):
        self.reload()
        self.open_detail("profile")
        button = self.element("save-cassette")
        expect(button.is_enabled(), "'save to cassette' is disabled for a passthrough exchange")
        button.click()
        result = self.element("save-result")
        text = self.wait("the save result stayed empty", lambda: result.text.strip())
        detail = self.admin_json(f"/__kakapo/requests/{self.ids['profile']}")
        saved = detail.get("saved")
        expect(isinstance(saved, dict) and isinstance(saved.get("interaction"), int),
               f"GET /__kakapo/requests/{self.ids['profile']} has no \"saved\" after the click (page said {text!r})")
        expect(str(saved["interaction"]) in text or self.save_cassette in text,
               f"the page's save result {text!r} names neither the cassette nor interaction {saved['interaction']}")
        self.close_detail()
        return f"saved as {saved}; the page said {text!r}"

    def check_cassette_view(self):
        # Kakapo lists what this run saved once it has folded it into the cassette (about a second); the view
        # loads when it opens, so it is opened after that.
        self.wait(
            "GET /__kakapo/cassette does not list the saved PUT /live/profile",
            lambda: any("/live/profile" in str(i.get("url"))
                        for i in self.admin_json("/__kakapo/cassette").get("interactions", [])),
        )
        self.element("tab-cassette").click()
        try:
            rows = self.wait(
                "the cassette view lists no row for the saved PUT /live/profile",
                lambda: [e.text for e in self.driver.find_elements(*by_testid("cassette-row"))
                         if e.is_displayed() and "/live/profile" in e.text],
            )
        finally:
            self.back_to_requests()
        return f"cassette rows {rows}"

    def reload(self):
        """A fresh page: it lists what Kakapo holds from the events' backlog."""
        self.driver.get(self.ui + "/__kakapo/ui")
        status = self.element("connection-status", timeout=10)
        self.wait("the reloaded page's events stream did not open", lambda: "live" in status.text.lower())
        ids = {self.ids[name] for name in REQUESTS_MADE if name in self.ids}
        self.wait("the reloaded page does not list every request of the test",
                  lambda: ids <= set(self.rows()) or None)

    def back_to_requests(self):
        for testid in ["tab-requests", "tab-list"]:
            tabs = [e for e in self.driver.find_elements(*by_testid(testid)) if e.is_displayed()]
            if tabs:
                tabs[0].click()
                break
        else:
            self.driver.get(self.ui + "/__kakapo/ui")
        self.element("filter-text")

    def check_image(self):
        detail = self.open_detail("logo")
        size = self.wait(
            "the PNG response is not shown as an image (an <img> from a blob: or data: URL, decoded)",
            lambda: next(
                ((img.get_property("naturalWidth"), img.get_property("naturalHeight"))
                 for img in detail.find_elements(By.TAG_NAME, "img")
                 if (img.get_attribute("src") or "").startswith(("blob:", "data:"))
                 and img.get_property("naturalWidth")),
                None,
            ),
        )
        expect(list(size) == [24, 24], f"the image is {size}, not the 24x24 PNG the upstream sent")
        self.close_detail()
        return f"the PNG is shown, {size[0]}x{size[1]}"

    def check_many(self):
        """Thousands of rows: the list keeps up, a filter answers at once, and the oldest row is a scroll away."""
        count = 2500
        parts = urllib.parse.urlsplit(self.base)
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
        started = time.monotonic()
        # Misses of the session's cassette: answered by Kakapo alone (about a millisecond each), each a row.
        for n in range(count):
            connection.request("GET", f"/users?page=1&many={n}", headers={"X-Kakapo-Session": self.session})
            answer = connection.getresponse()
            answer.read()
            expect(answer.status == 404, f"GET /users?page=1&many={n} answered {answer.status}")
        connection.close()
        sent = time.monotonic() - started
        counter = self.element("row-count")

        def held():
            digits = "".join(ch for ch in counter.text.split(" requests")[0].split(" of ")[-1] if ch.isdigit())
            return int(digits) if digits else 0

        least = count + len(self.ids)
        self.wait(f"the page does not count {least} requests", lambda: held() >= least, timeout=15)
        caught_up = time.monotonic() - started - sent
        # The last one is on top; a filter finds one row among thousands at once.
        self.wait("the newest row is not the last request", lambda: any(
            f"many={count - 1}" in text for text in self.rows().values()))
        began = time.monotonic()
        self.set_filter("filter-text", f"many={count // 2}")
        wanted = f"many={count // 2}"

        def one_left():
            flood = [text for text in self.rows().values() if "many=" in text]
            return len(flood) == 1 and wanted in flood[0]

        self.wait("the filter did not narrow thousands of rows to one", one_left)
        filtering = time.monotonic() - began
        self.set_filter("filter-text", "")
        expect(filtering < 2.0, f"filtering {least} rows took {filtering:.2f} s")
        # The oldest row is reached by scrolling to the bottom of the virtualized list.
        began = time.monotonic()
        bottom = (
            "const v = document.querySelector('[data-testid=\"request-list\"] .viewport')"
            " ?? document.querySelector('[data-testid=\"request-list\"]'); v.scrollTop = v.scrollHeight;"
        )

        def oldest_shown():
            # Scrolled again on every look: the list may still be settling after the filter was cleared.
            self.driver.execute_script(bottom)
            return self.ids["ping"] in self.rows()

        self.wait("scrolled to the bottom, the oldest request (the first ping) is not shown", oldest_shown)
        scrolling = time.monotonic() - began
        shown = len(self.displayed_rows())
        expect(shown < 200, f"{shown} rows are in the DOM: the list is not virtualized")
        return (f"{count} requests sent in {sent:.2f} s, listed {caught_up:.2f} s later; a filter took "
                f"{filtering * 1000:.0f} ms, scrolling to the oldest {scrolling * 1000:.0f} ms; {shown} rows in the DOM")

    def check_stream(self):
        detail = self.open_detail("stream")

        def chunk_rows():
            return [row.text for row in detail.find_elements(By.CSS_SELECTOR, "tr") if "data: " in row.text]

        rows = self.wait("the replayed stream's detail does not list its three chunks", lambda: (
            lambda found: found if len(found) == 3 else None)(chunk_rows()))
        expect("data: two" in rows[1] and "40" in rows[1], f"the second chunk is not 'data: two' at 40 ms: {rows}")
        expect("data: three" in rows[2] and "80" in rows[2], f"the third chunk is not 'data: three' at 80 ms: {rows}")
        self.close_detail()
        return f"chunks {rows}"

    def check_session_cassette(self):
        """The cassette view of the session: its three interactions, which were used, which is stale, and one's
        detail."""
        self.element("tab-cassette").click()
        try:
            picker = Select(self.element("session-picker"))
            option = next((o for o in picker.options if self.session in (o.get_attribute("value") or "") + o.text),
                          None)
            expect(option is not None, "the session picker does not offer the session "
                   + self.session + ": " + ", ".join(o.text for o in picker.options))
            picker.select_by_visible_text(option.text)

            def rows():
                found = [e.text for e in self.driver.find_elements(*by_testid("cassette-row")) if e.is_displayed()]
                return found if len(found) == 3 and any("/search" in row for row in found) else None

            found = self.wait("the session's cassette view does not list its three interactions", rows)
            by_url = {url: next(row for row in found if url in row) for url in ["/users?page=1", "/search", "/events/feed"]}

            def badges(row):
                words = row.lower().split()
                return {"used": "used" in words, "stale": "stale" in words}

            expect(badges(by_url["/users?page=1"]) == {"used": True, "stale": False},
                   f"GET /users?page=1 (replayed, an hour old): {by_url['/users?page=1']!r}")
            expect(badges(by_url["/events/feed"]) == {"used": True, "stale": False},
                   f"GET /events/feed (replayed, an hour old): {by_url['/events/feed']!r}")
            expect(badges(by_url["/search"]) == {"used": False, "stale": True},
                   f"POST /search (never matched, recorded in 2021): {by_url['/search']!r}")
            row = next(e for e in self.driver.find_elements(*by_testid("cassette-row"))
                       if e.is_displayed() and "/search" in e.text)
            row.click()
            detail = self.element("cassette-detail")
            self.wait("the interaction's detail does not show its recorded request body (Ada)",
                      lambda: "Ada" in detail.text and "/search" in detail.text)
        finally:
            self.back_to_requests()
        return f"rows {found}"

    def check_routes_store(self):
        """The routes (from the file) and the Store's collections, read-only, in the cassette view's panes."""
        self.element("tab-cassette").click()
        try:
            self.element("pane-routes").click()
            self.wait("the routes pane does not show the file's route GET /hello/:name and the /todos resource",
                      lambda: (lambda text: "/hello/:name" in text and "/todos" in text)(
                          self.driver.find_element(By.ID, "view-cassette").text))
            self.element("pane-store").click()

            def entities_shown():
                # As a person would: open every closed node of the trees (they fill as they open), then look.
                self.driver.execute_script(
                    "document.querySelectorAll('#view-cassette details:not([open])').forEach(d => d.open = true)")
                text = self.driver.find_element(By.ID, "view-cassette").text
                return "buy seeds" in text and "feed the kakapo" in text

            self.wait("the Store pane does not show the seeded todo and the one POST /todos made", entities_shown)
            editable = self.driver.execute_script(
                "return document.querySelectorAll('#view-cassette input:not([type=checkbox]):not([type=search])"
                ":not([data-testid=cassette-filter]), #view-cassette textarea, #view-cassette [contenteditable=true]')"
                ".length")
            expect(editable == 0, f"the Store pane has {editable} editable fields: it should be read-only")
            self.element("pane-interactions").click()
        finally:
            self.back_to_requests()
        return "route, resource and Store entities shown"

    def check_clean(self):
        self.collect_console()
        errors = [entry for entry in self.console if entry.get("level") == "SEVERE"]
        (self.output / "console.log").write_text("\n".join(json.dumps(e) for e in self.console) + "\n")
        expect(not errors, "the browser logged errors:\n" + "\n".join(e.get("message", "") for e in errors))
        shown = self.rows()
        own = {i: t for i, t in shown.items() if "__kakapo" in t}
        expect(not own, f"the page's own requests are in its list: {own}")
        strangers = set(shown) - set(self.ids.values())
        expect(not strangers, f"rows for requests the test did not make: { {i: shown[i] for i in strangers} }")
        return f"no console errors in {len(self.console)} log entries; {len(shown)} rows, all the test's"

    def screenshot(self):
        self.reload()
        self.open_detail("body-miss")
        self.element("miss-nearest")
        self.wait("no miss field shown", lambda: self.driver.find_elements(*by_testid("miss-field")))
        self.driver.save_screenshot(str(self.output / "inspector.png"))
        return "inspector.png"

    # -- with --admin-token ------------------------------------------------------------------------------------

    def token_dialog(self):
        return next((e for e in self.driver.find_elements(*by_testid("token-dialog")) if e.is_displayed()), None)

    def enter_token(self, value):
        dialog = self.wait("the page did not ask for the admin token", self.token_dialog)
        field = dialog.find_element(*by_testid("token-input"))
        field.clear()
        field.send_keys(value)
        dialog.find_element(*by_testid("token-save")).click()

    def check_token_prompt(self):
        # The page's files hold no data: they load without the token, and the events stream does not.
        status, _, _ = self.admin("/__kakapo/ui", token="")
        expect(status == 200, f"GET /__kakapo/ui without the token answered {status}")
        try:
            self.admin("/__kakapo/events?backlog=none", token="")
            raise CheckFailed("GET /__kakapo/events answered without the token")
        except urllib.error.HTTPError as error:
            expect(error.code == 401, f"GET /__kakapo/events without the token answered {error.code}, not 401")
        self.driver.get(self.ui + "/__kakapo/ui")
        self.enter_token("not-the-token-at-all")
        # A refused token asks again (the dialog opens with an empty field).
        self.wait("a wrong token was not asked for again", lambda: self.token_dialog() is not None
                  and self.token_dialog().find_element(*by_testid("token-input")).get_attribute("value") == "")
        self.enter_token(self.token)
        status = self.element("connection-status")
        self.wait("the page did not go live with the token", lambda: "live" in status.text.lower())
        self.baseline = max((e["id"] for e in self.journal() if isinstance(e.get("id"), int)), default=0)
        return "asked, refused a wrong token, and went live with the right one"

    def check_token_kept(self):
        self.driver.refresh()
        status = self.element("connection-status", timeout=10)
        self.wait("the reloaded page did not go live", lambda: "live" in status.text.lower())
        expect(self.token_dialog() is None, "the reloaded page asked for the token again")
        self.ids["ping"] = self.find_entry("GET", REQUESTS["ping"]["target"], after=self.baseline)
        self.wait("the reloaded page does not list the request from its backlog",
                  lambda: self.ids["ping"] in self.rows())
        self.collect_console()
        # The 401s of the refused calls are the browser's own network errors; nothing else may be.
        errors = [e.get("message", "") for e in self.console if e.get("level") == "SEVERE" and " 401 " not in
                  e.get("message", "")]
        expect(not errors, "the browser logged errors:\n" + "\n".join(errors))
        return "the token was kept for the tab"

    def main_token(self):
        steps = [
            ("token", "the page asks for the admin token and takes only the right one", self.check_token_prompt),
            ("token-a", "with the token, a curl request appears in the list within a second", self.check_live_row),
            ("token-kept", "a reload keeps the token (sessionStorage)", self.check_token_kept),
        ]
        for check, description, body in steps:
            if not self.run(check, description, body) and check == "token":
                break

    def main(self):
        self.start_browser()
        if self.token:
            try:
                self.main_token()
            finally:
                self.collect_console()
                (self.output / "console.log").write_text("\n".join(json.dumps(e) for e in self.console) + "\n")
                self.driver.quit()
            return 1 if self.failed else 0
        try:
            steps = [
                ("page", "the page loads under a strict Content-Security-Policy", self.load),
                ("a", "a request made by curl appears in the list within a second", self.check_live_row),
                ("traffic", "every request made is listed", self.make_traffic),
                ("b", "a miss shows its nearest recording and the differing field", self.check_miss),
                ("keys", "the keyboard: / filter, Esc, Home, j, Enter, Esc", self.check_keyboard),
                ("c", "filters and the body search narrow the list", self.check_filters),
                ("c-rows", "rows a filter hid come back as the same requests", self.check_rows_after_filters),
                ("d", "copy as curl gives a command that reproduces the request", self.check_curl),
                ("e", "save to cassette records a passthrough exchange", self.check_save),
                ("e-view", "the cassette view lists the saved interaction", self.check_cassette_view),
                ("img", "an image response is shown as the image", self.check_image),
                ("stream", "a replayed stream shows its chunks with their offsets", self.check_stream),
                ("cassette", "the session's cassette: used and stale interactions, and one's detail",
                 self.check_session_cassette),
                ("routes", "the routes and the Store, read-only", self.check_routes_store),
                ("f", "no console errors, and no row for the page's own requests", self.check_clean),
            ]
            for check, description, body in steps:
                ok = self.run(check, description, body)
                if not ok and check in ("page", "traffic"):
                    # Everything after needs the page and the requests: keep what the page shows now.
                    self.driver.save_screenshot(str(self.output / "inspector.png"))
                    break
            else:
                self.run("screenshot", "a screenshot of the list with a miss open", self.screenshot)
                self.run("many", "thousands of rows keep the page quick", self.check_many)
        finally:
            self.collect_console()
            (self.output / "console.log").write_text("\n".join(json.dumps(e) for e in self.console) + "\n")
            self.driver.quit()
        return 1 if self.failed else 0


# The requests the test makes: the session's cassette answers `session` ones (a hit, or a miss), the
# upstream the others (passthrough). The upstream's answers are in InspectorBrowserTests.swift.
REQUESTS = {
    "ping": {"method": "GET", "target": "/live/ping?n=1", "status": 200},
    "hit": {"method": "GET", "target": "/users?page=1", "status": 200, "session": True},
    "query-miss": {"method": "GET", "target": "/users?page=2", "status": 404, "session": True},
    "body-miss": {
        "method": "POST", "target": "/search", "status": 404, "session": True,
        "headers": ["Content-Type: application/json"], "body": '{"user":{"name":"Grace"},"limit":10}',
    },
    "order": {
        "method": "POST", "target": "/live/orders", "status": 201,
        "headers": ["Content-Type: application/json", f"X-Note: {HOSTILE_NOTE}"],
        "body": '{"item":"' + NEEDLE + '","quantity":2,"note":"it\'s $(false)"}',
    },
    "not-found": {"method": "GET", "target": "/live/missing", "status": 404},
    "delete": {"method": "DELETE", "target": "/live/orders/9", "status": 204},
    "logo": {"method": "GET", "target": "/live/logo.png", "status": 200},
    "profile": {
        "method": "PUT", "target": "/live/profile", "status": 200,
        "headers": ["Content-Type: application/json", f"Authorization: Bearer {TOKEN}"],
        "body": '{"name":"Ada","password":"' + PASSWORD + '"}',
    },
    "boom": {"method": "GET", "target": "/live/boom", "status": 500},
    "stream": {"method": "GET", "target": "/events/feed", "status": 200, "session": True},
    "route": {"method": "GET", "target": "/hello/ada", "status": 200},
    "todo": {
        "method": "POST", "target": "/todos", "status": 201,
        "headers": ["Content-Type: application/json"], "body": '{"title":"buy seeds"}',
    },
}
REQUESTS_MADE = list(REQUESTS)


if __name__ == "__main__":
    sys.exit(Inspector(json.loads(sys.argv[1])).main())
