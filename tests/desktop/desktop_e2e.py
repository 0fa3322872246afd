#!/usr/bin/env python3
"""End-to-end test of Taskdeck's real desktop window (Tauri 2 + WebKitGTK).

The desktop binary is started by tauri-driver (which starts WebKitWebDriver, which starts the
app) on an X display, a test "agent" talks MCP over HTTP to the app's loopback server, and the
test drives the window through W3C WebDriver. Python 3 standard library only.

Normally run through run.sh (it provides the virtual display, the session bus, a notification
daemon and the dbus-monitor log this file reads):

    tests/desktop/run.sh [path/to/taskdeck]

Direct use, inside an X session with a D-Bus session bus and a notification daemon:

    python3 tests/desktop/desktop_e2e.py --binary BIN --notify-log notify.log --work-dir DIR
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
import traceback
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
PROTOCOL = "2026-07-28"
MCP_META = {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL,
    # An agent whose client can ask its user (form elicitation): it is shown the questions it
    # may answer, so it reads `input_required` while the human decides in the window.
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}},
}
APPROVAL_SCHEMA = {
    "type": "object",
    "properties": {"reason": {"type": "string", "minLength": 3}},
    "required": ["reason"],
}
# The gateway check's upstream: server-filesystem from tests/upstreams (run.sh installs it).
FS_SERVER = REPO / "tests/upstreams/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
# The window's minimum inner size (src-tauri/src/desktop/window.rs MIN_SIZE), in pixels at scale 1.
MIN_SIZE = (640, 480)
BANNER_RE = re.compile(r"Taskdeck is running with its window on (http://127\.0\.0\.1:(\d+))")
T0 = time.monotonic()


def log(msg: str) -> None:
    print(f"[{time.monotonic() - T0:6.1f}s] {msg}", flush=True)


class Failure(AssertionError):
    pass


def check(cond, msg: str) -> None:
    if not cond:
        raise Failure(msg)


def wait_for(fn, what: str, timeout: float = 15.0, interval: float = 0.1):
    """Polls fn() until it returns something truthy; raises Failure after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        try:
            last = fn()
            if last:
                return last
        except WebDriverError as e:
            if e.error == "invalid session id":
                raise  # the window is gone: waiting longer cannot help
            last = e
        except (TransportError, OSError, ValueError, KeyError) as e:
            last = e
        if time.monotonic() > deadline:
            raise Failure(f"timed out after {timeout:.0f}s waiting for {what} (last: {last!r})")
        time.sleep(interval)


_given_ports: set[int] = set()


def free_port() -> int:
    """A port nothing listens on now, never the same twice in a run."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in _given_ports:
            _given_ports.add(port)
            return port


# ------------------------------------------------------------------------------------ HTTP


class TransportError(Exception):
    """The request got no HTTP answer (connection refused, reset or closed, timeout)."""

    def __init__(self, message: str, timed_out: bool = False):
        super().__init__(message)
        self.timed_out = timed_out


def established(port: int) -> int:
    """How many TCP connections to 127.0.0.1:`port` are established (`ss`, iproute2)."""
    out = subprocess.run(["ss", "-Htn", "state", "established", f"( sport = :{port} )"],
                         capture_output=True, text=True, check=False).stdout
    return len([line for line in out.splitlines() if line.strip()])


def http_request(method: str, url: str, body=None, headers=None, timeout: float = 30.0):
    """One HTTP request; returns (status, headers, body bytes). Raises TransportError."""
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    req = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()
    except (urllib.error.URLError, http.client.HTTPException, ConnectionError, TimeoutError, socket.timeout) as e:
        timed_out = isinstance(e, TimeoutError) or isinstance(getattr(e, "reason", None), TimeoutError)
        raise TransportError(f"{method} {url}: {e!r}", timed_out) from e


# ------------------------------------------------------------------------------- WebDriver


class WebDriverError(Exception):
    def __init__(self, status: int, error: str, message: str):
        super().__init__(f"{status} {error}: {message[:300]}")
        self.status, self.error, self.message = status, error, message


class WebDriver:
    """A small W3C WebDriver client. Idempotent calls are retried when the connection drops
    (tauri-driver now and then closes one without answering)."""

    def __init__(self, base: str):
        self.base = base.rstrip("/")
        self.sid: str | None = None
        self.drops = 0

    def _once(self, method: str, path: str, body=None, timeout: float = 30.0):
        if method == "POST" and body is None:
            body = {}
        status, _, raw = http_request(method, self.base + path, body, {"Content-Type": "application/json"}, timeout)
        try:
            payload = json.loads(raw or b"null")
        except ValueError as e:
            raise TransportError(f"{method} {path}: HTTP {status} with a non-JSON body {raw[:200]!r}") from e
        value = payload.get("value") if isinstance(payload, dict) else None
        if status >= 400:
            v = value if isinstance(value, dict) else {}
            raise WebDriverError(status, v.get("error", "unknown error"), v.get("message", str(payload)))
        return value

    def call(self, method: str, path: str, body=None, *, idempotent: bool = True, timeout: float = 20.0):
        attempts = 6 if idempotent else 1
        for i in range(attempts):
            try:
                return self._once(method, path, body, timeout)
            except TransportError as e:
                # A dropped connection is retried; a request that hangs is not (it would again).
                if e.timed_out or i == attempts - 1:
                    raise
                self.drops += 1
                time.sleep(0.1 * (i + 1))

    def s(self, path: str) -> str:
        return f"/session/{self.sid}{path}"

    def new_session(self, capabilities: dict, timeout: float = 30.0) -> dict:
        value = self.call("POST", "/session", {"capabilities": capabilities}, idempotent=False, timeout=timeout)
        self.sid = value["sessionId"]
        return value

    def quit(self) -> None:
        if self.sid:
            try:
                self.call("DELETE", self.s(""), timeout=15)
            finally:
                self.sid = None

    def js(self, script: str, *args, mutates: bool = False):
        """Runs `script` (a function body; `arguments` holds args) in the page."""
        return self.call("POST", self.s("/execute/sync"), {"script": script, "args": list(args)}, idempotent=not mutates)

    def find(self, css: str):
        """The first element matching `css`, or None."""
        found = self.call("POST", self.s("/elements"), {"using": "css selector", "value": css})
        return found[0] if found else None

    def url(self) -> str:
        return self.call("GET", self.s("/url"))

    def title(self) -> str:
        return self.call("GET", self.s("/title"))

    def screenshot(self) -> bytes:
        return base64.b64decode(self.call("GET", self.s("/screenshot"), timeout=30))

    @staticmethod
    def eid(element) -> str:
        return next(iter(element.values()))

    def click_element(self, element) -> None:
        self.call("POST", self.s(f"/element/{self.eid(element)}/click"), idempotent=False)

    def clear_element(self, element) -> None:
        self.call("POST", self.s(f"/element/{self.eid(element)}/clear"))

    def type_into(self, element, text: str) -> None:
        self.call("POST", self.s(f"/element/{self.eid(element)}/value"), {"text": text}, idempotent=False)

    def rect(self, element):
        """The element's box in the viewport, `[x, y, width, height]` in CSS pixels."""
        return self.js("const r = arguments[0].getBoundingClientRect(); return [r.x, r.y, r.width, r.height];", element)

    def click(self, finder, done, what: str, timeout: float = 15.0, landed=None) -> None:
        """Clicks the element `finder()` returns, once it has stopped moving, until `done()` holds.

        WebDriver clicks at the point where the element was: one that moves in between (a list
        above it redrawn) gets a click meant for another. So the element must keep its box for
        0.15 s first. A click is sent again only when the previous one surely did not land (stale
        or covered element), or it may have been lost with the connection and `done()` still does
        not hold a moment later: clicks are not idempotent (a second click can undo the first).
        Given `landed()` (true once the click visibly took effect, e.g. the detail shows the task
        it opens), a click after which `done()` does not hold 3 s later and `landed()` does not
        either went elsewhere (the page moved under it) and is sent again."""
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            el = finder()
            if el is None:
                last = "element not found"
                time.sleep(0.1)
                continue
            try:
                before = self.rect(el)
                time.sleep(0.15)
                if self.rect(el) != before:
                    last = "element moving"
                    continue
                self.click_element(el)
            except WebDriverError as e:
                if e.error == "invalid session id":
                    raise  # the window is gone: trying again cannot help
                last = e
                time.sleep(0.15)
                continue
            except TransportError as e:
                last = e
                try:
                    wait_for(done, what, timeout=2.0)
                    return
                except Failure:
                    continue
            if landed is not None:
                try:
                    wait_for(done, what, timeout=min(3.0, max(1.0, deadline - time.monotonic())))
                    return
                except Failure:
                    if not landed():
                        last = "clicked, but it landed elsewhere"
                        continue
            wait_for(done, f"{what} (after the click)", timeout=max(1.0, deadline - time.monotonic()))
            return
        raise Failure(f"could not click {what}: {last!r}")

    def press(self, element, key: str) -> None:
        """Sends one key whose repetition is harmless (Enter in a search field)."""
        self.call("POST", self.s(f"/element/{self.eid(element)}/value"), {"text": key})

    def fill(self, element, text: str, attempts: int = 4) -> None:
        """Replaces an input's text by typing (real key events).

        Typing is not idempotent (keys append), but clearing and then typing is: after a dropped
        connection the keys may or may not have gone through, so the field is read back and the
        pair is sent again until the field holds `text`, up to `attempts` times."""
        for i in range(attempts):
            self.clear_element(element)
            if not text:
                return
            try:
                self.type_into(element, text)
                return
            except TransportError as e:
                if e.timed_out or i == attempts - 1:
                    raise
                self.drops += 1
                if self.js("return arguments[0].value", element) == text:
                    return
                time.sleep(0.1 * (i + 1))


# ----------------------------------------------------------------------------------- agent


class Agent:
    """An MCP client as an agent would be (protocol 2026-07-28 with the tasks extension)."""

    def __init__(self, base: str, token: str):
        self.base, self.token, self.next_id = base, token, 0

    def rpc(self, method: str, name: str, params: dict) -> dict:
        self.next_id += 1
        body = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": {**params, "_meta": MCP_META}}
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": PROTOCOL,
            "Mcp-Method": method,
            "Mcp-Name": name,
            "Authorization": f"Bearer {self.token}",
        }
        status, resp_headers, raw = http_request("POST", f"{self.base}/mcp", body, headers)
        text = raw.decode("utf-8", "replace")
        if "text/event-stream" in (resp_headers.get("Content-Type") or ""):
            datas = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
            text = next((d for d in reversed(datas) if d), "")
        check(status == 200, f"{method}: HTTP {status}: {text[:300]}")
        msg = json.loads(text)
        if "error" in msg:
            raise Failure(f"{method}: {msg['error']}")
        return msg["result"]

    def start_task(self, tool: str, arguments: dict) -> str:
        r = self.rpc("tools/call", tool, {"name": tool, "arguments": arguments})
        check(r.get("resultType") == "task" and r.get("taskId"), f"{tool} should run as a task: {r}")
        return r["taskId"]

    def get(self, task_id: str) -> dict:
        return self.rpc("tasks/get", task_id, {"taskId": task_id})

    def wait_status(self, task_id: str, status: str, timeout: float = 15.0) -> dict:
        return wait_for(lambda: (lambda t: t.get("status") == status and t)(self.get(task_id)), f"task {task_id[:8]} to be {status}", timeout)


def api_get(base: str, path: str, token: str | None):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    status, _, raw = http_request("GET", base + path, None, headers, timeout=10)
    try:
        return status, json.loads(raw or b"null")
    except ValueError:
        return status, raw[:200]


# ------------------------------------------------------------------------- notifications


def monitor_blocks(log_path: Path) -> list[str]:
    """The messages of a dbus-monitor log, one text block each (a header line, then arguments)."""
    try:
        text = log_path.read_text(errors="replace")
    except FileNotFoundError:
        return []
    # A message starts a line with its type; an argument's text may start a line too (a
    # multi-line body), so only these words split.
    return re.split(r"\n(?=(?:method call|method return|signal|error) )", text)


def notify_calls(log_path: Path) -> list[dict]:
    """The Notify method calls in a dbus-monitor log: app name, summary, body and actions of each.

    Top-level arguments are indented by 3 spaces; the string arguments of Notify are, in order,
    app_name, app_icon, summary and body (a body may span lines: it ends where the next argument
    begins); then comes the actions array, whose strings (6 spaces) alternate key and label."""
    calls = []
    for block in monitor_blocks(log_path):
        head = block.split("\n", 1)[0]
        if not head.startswith("method call") or "member=Notify" not in head:
            continue
        strings = [m.group(1) for m in re.finditer(r'^   string "(.*?)"$(?=\n   \S|\Z)', block, re.M | re.S)]
        actions_block = re.search(r"^   array \[\n(.*?)^   \]$", block, re.M | re.S)
        labels = re.findall(r'^      string "(.*)"$', actions_block.group(1), re.M) if actions_block else []
        if len(strings) >= 4:
            calls.append({
                "app": strings[0], "summary": strings[2], "body": strings[3],
                "actions": dict(zip(labels[::2], labels[1::2])), "raw": block,
            })
    return calls


def signals(log_path: Path, member: str, args: str) -> list[tuple]:
    """The `member` signals in a dbus-monitor log, each as the groups of `args` (a regex of its
    argument lines)."""
    found = []
    for block in monitor_blocks(log_path):
        head = block.split("\n", 1)[0]
        m = re.search(args, block, re.M)
        if head.startswith("signal") and f"member={member}" in head and m:
            found.append(m.groups())
    return found


def action_signals(log_path: Path) -> list[tuple[int, str]]:
    """The ActionInvoked signals: (notification id, action key) each."""
    return [(int(i), a) for i, a in signals(log_path, "ActionInvoked", r'^   uint32 (\d+)\n   string "(.*)"$')]


def closed_signals(log_path: Path) -> list[tuple[int, int]]:
    """The NotificationClosed signals: (notification id, reason) each."""
    return [(int(i), int(r)) for i, r in signals(log_path, "NotificationClosed", r"^   uint32 (\d+)\n   uint32 (\d+)$")]


def dunst_history() -> list[dict]:
    """dunst's closed notifications (`dunstctl history`), newest first, each as {field: value}."""
    r = subprocess.run(["dunstctl", "history"], capture_output=True, text=True, timeout=10)
    data = json.loads(r.stdout or "{}").get("data") or [[]]
    return [{k: v.get("data") for k, v in entry.items()} for entry in data[0]]


def dunst_displayed() -> str:
    """How many notifications dunst shows now (`dunstctl count displayed`)."""
    return subprocess.run(["dunstctl", "count", "displayed"], capture_output=True, text=True, timeout=10).stdout.strip()


# -------------------------------------------------------------------------- the app under test


def process_group_alive(pgid: int) -> list[int]:
    """Pids still in process group `pgid` (zombies excluded)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if fields[0] != "Z" and int(fields[2]) == pgid:
            pids.append(int(entry))
    return pids


def stop_group(proc: subprocess.Popen, what: str, grace: float = 5.0) -> None:
    """Ends a process started in its own session and everything left in its process group."""
    pgid = proc.pid
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        if not process_group_alive(pgid):
            break
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + wait
        while process_group_alive(pgid) and time.monotonic() < deadline:
            try:
                proc.wait(timeout=0.05)
            except subprocess.TimeoutExpired:
                pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass
    left = process_group_alive(pgid)
    if left:
        log(f"WARNING: {what}: processes {left} did not stop")


class Desktop:
    """The app with its window, started by tauri-driver, and a WebDriver session on it."""

    def __init__(self, binary: Path, work: Path, tauri_driver: str):
        self.binary, self.work, self.tauri_driver = binary, work, tauri_driver
        self.data_dir = work / "window-data"
        self.config_dir = work / "window-config"
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.driver_log = work / "tauri-driver.log"
        # WebKitWebDriver does not pass the app's stdout on: the app is started through a
        # wrapper that execs the binary (same process) with its output in files, one pair per
        # launch.
        self.launches = 0
        self.app_out, self.app_err = work / "window-0.out", work / "window-0.err"
        self.launcher = work / "taskdeck-window"
        self.proc: subprocess.Popen | None = None
        self.wd: WebDriver | None = None
        self.token = ""
        # The gateway's upstream "fs": server-filesystem over this directory, in servers.json
        # before the app starts.
        self.fs_dir = work / "gateway-files"
        self.fs_dir.mkdir(parents=True, exist_ok=True)
        self.config_dir.mkdir(parents=True, exist_ok=True)
        servers = {"servers": {"fs": {"command": "node", "args": [str(FS_SERVER), str(self.fs_dir)]}}}
        (self.config_dir / "servers.json").write_text(json.dumps(servers))
        self.env = dict(os.environ)
        self.env.update(
            TASKDECK_DATA_DIR=str(self.data_dir),
            TASKDECK_CONFIG_DIR=str(self.config_dir),
            TASKDECK_PORT=str(self.port),
        )

    def app_env(self) -> dict:
        """The environment a second launch by the user would have (no automation flag)."""
        env = dict(self.env)
        env.pop("TAURI_WEBVIEW_AUTOMATION", None)
        return env

    def start(self, attempts: int = 2) -> None:
        for attempt in range(1, attempts + 1):
            try:
                self._start_once()
                return
            except (TransportError, WebDriverError, Failure) as e:
                log(f"window start attempt {attempt} failed: {e}")
                self.stop()
                out = self.app_out.read_text(errors="replace") if self.app_out.exists() else ""
                if "running headless" in out:
                    raise Failure(
                        f"{self.binary} started headless although DISPLAY is set: it was built without "
                        "the desktop feature (build it with --features desktop)"
                    ) from e
                if attempt == attempts:
                    raise

    def _start_once(self) -> None:
        self.launches += 1
        self.app_out, self.app_err = self.work / f"window-{self.launches}.out", self.work / f"window-{self.launches}.err"
        self.launcher.write_text(f'#!/bin/sh\nexec "{self.binary}" "$@" >>"{self.app_out}" 2>>"{self.app_err}"\n')
        self.launcher.chmod(0o755)
        wd_port, native_port = free_port(), free_port()
        with open(self.driver_log, "ab") as out:
            self.proc = subprocess.Popen(
                [self.tauri_driver, "--port", str(wd_port), "--native-port", str(native_port)],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=self.env,
                start_new_session=True,
            )
        self.wd = WebDriver(f"http://127.0.0.1:{wd_port}")
        native = WebDriver(f"http://127.0.0.1:{native_port}")
        # tauri-driver answers /status itself; a session needs WebKitWebDriver to listen too.
        wait_for(lambda: self.proc.poll() is None and self.wd._once("GET", "/status", timeout=2) is not None, "tauri-driver to answer /status", timeout=15)
        wait_for(lambda: self.proc.poll() is None and (native._once("GET", "/status", timeout=2) or {}).get("ready"), "WebKitWebDriver to be ready", timeout=15)
        t = time.monotonic()
        caps = self.wd.new_session({"alwaysMatch": {"tauri:options": {"application": str(self.launcher)}}})
        log(f"WebDriver session {self.wd.sid[:8]} on {caps['capabilities'].get('browserName')} {caps['capabilities'].get('browserVersion')} ({time.monotonic() - t:.1f}s)")
        wait_for(lambda: BANNER_RE.search(self.app_out.read_text(errors="replace")) if self.app_out.exists() else None, "the app's 'running with its window' banner", timeout=20)
        self.token = (self.config_dir / "admin-token").read_text().strip()
        wait_for(lambda: self.wd.js("return document.getElementById('conn').dataset.state") == "open", "the page's live connection (#conn 'Live')", timeout=20)

    def app_alive(self) -> bool:
        """The app launched for the window still runs (it is in tauri-driver's process group)."""
        if not self.proc:
            return False
        for pid in process_group_alive(self.proc.pid):
            try:
                if os.readlink(f"/proc/{pid}/exe") == str(self.binary):
                    return True
            except OSError:
                pass
        return False

    def banners(self) -> list[str]:
        return BANNER_RE.findall(self.app_out.read_text(errors="replace")) if self.app_out.exists() else []

    def stop(self) -> None:
        if self.wd and self.wd.sid:
            try:
                self.wd.quit()
            except (TransportError, WebDriverError) as e:
                log(f"closing the WebDriver session: {e}")
        if self.proc:
            stop_group(self.proc, "tauri-driver and the app")
            self.proc = None


# ------------------------------------------------------------------------- page helpers

ROW_MAIN_BY_ID = """
const id = arguments[0];
const row = [...document.querySelectorAll('#task-list .row:not([hidden])')]
  .find((r) => r.querySelector('.row-id').title === id);
return row ? row.querySelector('.cell-main') : null;
"""

WHAT_IS_AT_ROW_MAIN = """
const id = arguments[0];
const row = [...document.querySelectorAll('#task-list .row:not([hidden])')]
  .find((r) => r.querySelector('.row-id').title === id);
if (!row) return 'no row';
const b = row.querySelector('.cell-main').getBoundingClientRect();
const at = document.elementFromPoint(b.x + b.width / 2, b.y + b.height / 2);
const detail = document.querySelector('#detail');
return JSON.stringify({box: [b.x, b.y, b.width, b.height], at: at && at.outerHTML.slice(0, 160),
  active: document.activeElement && document.activeElement.id, dialog: [...document.querySelectorAll('dialog[open]')].map((d) => d.id),
  detail: detail && detail.textContent.slice(0, 120), hash: location.hash});
"""

ROW_BADGE = """
const id = arguments[0];
const row = [...document.querySelectorAll('#task-list .row:not([hidden])')]
  .find((r) => r.querySelector('.row-id').title === id);
return row ? row.querySelector('.badge-text').textContent : null;
"""

VISIBLE_ROW_IDS = """
return [...document.querySelectorAll('#task-list .row:not([hidden])')]
  .map((r) => ({ y: new DOMMatrixReadOnly(getComputedStyle(r).transform).m42, id: r.querySelector('.row-id').title }))
  .sort((a, b) => a.y - b.y)
  .map((r) => r.id);
"""

LIST_SETTLED = """
const footer = document.getElementById('list-footer').textContent;
return !/Loading|Updating/.test(footer);
"""

DETAIL_TASK_ID = """
const el = document.querySelector('#detail .task-id');
return el ? el.textContent : null;
"""

DETAIL_BADGE = """
const el = document.querySelector('#detail .detail-badge .badge-text');
return el ? el.textContent : null;
"""

BUTTON_BY_TEXT = """
const [scope, text] = arguments;
return [...document.querySelectorAll(scope + ' button')]
  .find((b) => b.textContent.trim() === text && !b.hidden && b.offsetParent !== null) || null;
"""

FIELD_BY_LABEL = """
const [card, label] = arguments;
const l = [...document.querySelectorAll(card + ' label')]
  .find((x) => x.childNodes[0] && x.childNodes[0].textContent.trim() === label);
return l ? document.getElementById(l.htmlFor) : null;
"""

# A waiting task is in the inbox either as a row of the approval queue (its summary button
# opens it) or, for other input requests, as a plain inbox entry.
INBOX_ITEM = """
const id = arguments[0];
const queued = [...document.querySelectorAll('#inbox:not([hidden]) #approvals:not([hidden]) li.approval')]
  .find((l) => l.dataset.taskId === id);
if (queued) return queued.querySelector('.approval-summary');
return [...document.querySelectorAll('#inbox:not([hidden]) .inbox-item')]
  .find((b) => b.dataset.taskId === id) || null;
"""

INBOX_TEXT = """
const id = arguments[0];
const queued = [...document.querySelectorAll('#inbox:not([hidden]) #approvals:not([hidden]) li.approval')]
  .find((l) => l.dataset.taskId === id);
const el = queued ? queued.querySelector('.approval-tool')
  : document.querySelector('#inbox:not([hidden]) .inbox-item[data-task-id="' + id + '"] .inbox-msg');
return el ? el.textContent : null;
"""


def xdotool(*args: str) -> list[str]:
    """Runs xdotool on the test's display; returns the words it printed (window ids)."""
    r = subprocess.run(["xdotool", *args], capture_output=True, text=True, timeout=10)
    return r.stdout.split()


def screen_size() -> tuple[int, int]:
    """The X screen's size in pixels (xdotool getdisplaygeometry)."""
    w, h = xdotool("getdisplaygeometry")
    return int(w), int(h)


def window_geometry(win: str) -> tuple[int, int, int, int]:
    """(x, y, width, height) of an X window, from xdotool getwindowgeometry --shell."""
    r = subprocess.run(["xdotool", "getwindowgeometry", "--shell", win], capture_output=True, text=True, timeout=10)
    v = dict(line.split("=", 1) for line in r.stdout.split() if "=" in line)
    check({"X", "Y", "WIDTH", "HEIGHT"} <= v.keys(), f"xdotool getwindowgeometry {win}: {r.stdout!r} {r.stderr!r}")
    return int(v["X"]), int(v["Y"]), int(v["WIDTH"]), int(v["HEIGHT"])


def check_on_screen(geo: tuple[int, int, int, int], what: str) -> None:
    x, y, w, h = geo
    sw, sh = screen_size()
    check(x >= 0 and y >= 0 and x + w <= sw and y + h <= sh, f"{what} at {w}x{h}+{x}+{y} is not inside the {sw}x{sh} screen")
    check(w >= MIN_SIZE[0] and h >= MIN_SIZE[1], f"{what} is {w}x{h}, below the minimum {MIN_SIZE[0]}x{MIN_SIZE[1]}")


def taskdeck_windows() -> set[str]:
    return set(xdotool("search", "--onlyvisible", "--name", "Taskdeck"))


def own_session_launch(binary: Path, env: dict, out_path: Path, err_path: Path) -> subprocess.Popen:
    """Starts the binary in a D-Bus session of its own (as from another desktop session: the
    single-instance plugin of the window under test cannot see it)."""
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        return subprocess.Popen(["dbus-run-session", "--", str(binary)], stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env, start_new_session=True)


def child_running(parent: subprocess.Popen, binary: Path) -> int | None:
    """The pid of `binary` running in `parent`'s process group, if any."""
    for pid in process_group_alive(parent.pid):
        try:
            if os.readlink(f"/proc/{pid}/exe") == str(binary):
                return pid
        except OSError:
            pass
    return None


def png_size(data: bytes) -> tuple[int, int]:
    check(data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG")
    return struct.unpack(">II", data[16:24])


# --------------------------------------------------------------------------------- tests


class Suite:
    def __init__(self, args):
        self.args = args
        self.binary = Path(args.binary).resolve()
        self.work = Path(args.work_dir).resolve()
        self.notify_log = Path(args.notify_log).resolve()
        self.menu_choice = Path(args.menu_choice).resolve() if args.menu_choice else None
        self.desktop: Desktop | None = None
        self.agent: Agent | None = None
        self.ids: dict[str, str] = {}
        self.results: list[tuple[str, bool, str]] = []
        self.restarts = 0

    # ------------------------------------------------------------------ infrastructure

    def run(self, name: str, fn, needs_window: bool = False) -> None:
        log(f"--- {name}")
        t = time.monotonic()
        for attempt in (1, 2):
            try:
                if time.monotonic() - T0 > self.args.budget:
                    raise Failure(f"not run: the run already took {time.monotonic() - T0:.0f}s (budget {self.args.budget:.0f}s)")
                if needs_window and not (self.desktop and self.desktop.wd and self.desktop.wd.sid):
                    raise Failure("the window is not running (see the first failure)")
                fn()
            except Exception as e:  # noqa: BLE001 - every failure is reported, then the next test runs
                detail = "".join(traceback.format_exception(e)) if not isinstance(e, Failure) else str(e)
                log(f"FAIL {name} ({time.monotonic() - t:.1f}s): {detail.strip()}")
                if needs_window:
                    self.diagnose(name)
                if needs_window and attempt == 1 and self.session_lost(e) and self.restart_window():
                    log(f"--- {name} (again, in the restarted window)")
                    continue
                self.results.append((name, False, str(e)))
                return
            log(f"PASS {name} ({time.monotonic() - t:.1f}s)")
            self.results.append((name, True, ""))
            return

    @staticmethod
    def session_lost(e: Exception) -> bool:
        return isinstance(e, WebDriverError) and e.error == "invalid session id"

    def restart_window(self) -> bool:
        """WebKitWebDriver lost the session (now and then, under load) although the app runs:
        when the app still serves, the window is started again on the same data (tasks are
        durable) and the test runs once more. An app that stopped is a failure, not retried."""
        d = self.desktop
        alive = d.app_alive()
        status, _ = api_get(d.base, "/v1/me", d.token) if alive else (None, None)
        if not alive or status != 200:
            log(f"  the WebDriver session is gone and the app is {'not serving' if alive else 'not running'}: no retry")
            return False
        log("  the WebDriver session is gone but the app still runs and serves: restarting the window")
        self.restarts += 1
        d.stop()
        try:
            d.start()
        except Exception as e:  # noqa: BLE001
            log(f"  the window did not start again: {e}")
            return False
        return True

    def diagnose(self, name: str) -> None:
        d = self.desktop
        if not (d and d.wd and d.wd.sid):
            return
        if d.proc:
            procs = []
            for pid in process_group_alive(d.proc.pid):
                try:
                    procs.append(f"{pid} {Path(f'/proc/{pid}/cmdline').read_bytes().replace(bytes(1), b' ').decode()[:100]}")
                except OSError:
                    pass
            log("  processes of the window: " + "; ".join(procs))
        try:
            wins = subprocess.run(["xdotool", "search", "--name", "Taskdeck"], capture_output=True, text=True, timeout=5).stdout.split()
            log(f"  X windows named Taskdeck: {wins}")
        except (OSError, subprocess.SubprocessError):
            pass
        for f in (d.app_err, d.driver_log):
            if f.exists():
                tail = f.read_text(errors="replace")[-1500:]
                log(f"  tail of {f.name}:\n    " + "\n    ".join(tail.splitlines()))
        slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:40]
        try:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            path = ARTIFACTS / f"desktop-failure-{slug}.png"
            path.write_bytes(d.wd.screenshot())
            log(f"  screenshot of the window: {path}")
            text = d.wd.js("return document.body.innerText.slice(0, 1500)")
            log("  window text:\n    " + "\n    ".join(text.splitlines()))
        except Exception as e:  # noqa: BLE001 - diagnostics must not hide the failure
            log(f"  (no diagnostics: {e})")

    @property
    def wd(self) -> WebDriver:
        return self.desktop.wd

    def row_badge(self, task_id: str):
        return self.wd.js(ROW_BADGE, task_id)

    def wait_row_badge(self, task_id: str, label: str, timeout: float = 15.0) -> None:
        wait_for(lambda: self.row_badge(task_id) == label, f"the row of {task_id[:8]} to show '{label}'", timeout)

    def visible_rows(self) -> list[str]:
        return self.wd.js(VISIBLE_ROW_IDS)

    def wait_rows(self, expected: list[str], what: str, timeout: float = 15.0) -> None:
        want = sorted(expected)
        wait_for(lambda: self.wd.js(LIST_SETTLED) and sorted(self.visible_rows()) == want, what, timeout)

    def open_row(self, task_id: str) -> None:
        """Clicks the task's row (its text, not its checkbox) and waits for its detail."""
        try:
            self.wd.click(
                lambda: self.wd.js(ROW_MAIN_BY_ID, task_id),
                lambda: self.wd.js(DETAIL_TASK_ID) == task_id,
                f"the row of {task_id[:8]}",
            )
        except Failure as e:
            seen = self.wd.js(WHAT_IS_AT_ROW_MAIN, task_id)
            raise Failure(f"{e}; at the centre of the row's title: {seen}") from None

    def button(self, scope: str, text: str):
        return self.wd.js(BUTTON_BY_TEXT, scope, text)

    # ------------------------------------------------------------------ the tests

    def test_no_display_fallback(self) -> None:
        """(5) Without DISPLAY and WAYLAND_DISPLAY the binary serves headless and prints the UI link."""
        env = dict(os.environ)
        for v in ("DISPLAY", "WAYLAND_DISPLAY"):
            env.pop(v, None)
        port = free_port()
        env.update(
            TASKDECK_DATA_DIR=str(self.work / "headless-data"),
            TASKDECK_CONFIG_DIR=str(self.work / "headless-config"),
            TASKDECK_PORT=str(port),
        )
        out_path, err_path = self.work / "headless.out", self.work / "headless.err"
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            proc = subprocess.Popen([str(self.binary)], stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env, start_new_session=True)
        try:
            link_re = re.compile(r"^  Open the UI:   (http://127\.0\.0\.1:(\d+)/#token=(\S+))$", re.M)

            def link():
                check(proc.poll() is None, f"the binary exited ({proc.returncode}): {err_path.read_text(errors='replace')[-500:]}")
                return link_re.search(out_path.read_text(errors="replace"))

            m = wait_for(link, "the 'Open the UI:' line", timeout=20)
            out, err = out_path.read_text(errors="replace"), err_path.read_text(errors="replace")
            check("no display" in err, f"stderr should say there is no display; it is:\n{err}")
            check(f"Taskdeck is running headless on http://127.0.0.1:{port}" in out, f"stdout should say it runs headless on port {port}:\n{out}")
            check("with its window" not in out, "a window banner was printed")
            check(int(m.group(2)) == port, f"the link has port {m.group(2)}, expected {port}")
            url, token = m.group(1), m.group(3)
            check(token == (self.work / "headless-config" / "admin-token").read_text().strip(), "the link's token is not the admin token")
            base = url.split("/#", 1)[0]
            status, me = api_get(base, "/v1/me", token)
            check(status == 200 and isinstance(me, dict) and me.get("principal") == "admin", f"/v1/me with the link's token: {status} {me}")
            status, _ = api_get(base, "/v1/me", None)
            check(status == 401, f"/v1/me without a token should be 401, got {status}")
            status, _, page = http_request("GET", base + "/", timeout=10)
            check(status == 200 and b"<title>Taskdeck</title>" in page, f"the UI page at {base}/: {status}")
            log(f"  headless fallback: {err.strip().splitlines()[-1] if err.strip() else ''!s}")
            # A second launch without a display (over SSH, say) finds this one by its data dir.
            env2 = dict(env)
            env2.pop("DBUS_SESSION_BUS_ADDRESS", None)
            env2["TASKDECK_PORT"] = str(free_port())
            second = subprocess.run([str(self.binary)], capture_output=True, text=True, env=env2, timeout=30, stdin=subprocess.DEVNULL)
            lines = [line for line in second.stderr.splitlines() if line.strip()]
            want = f"taskdeck: Taskdeck is already running on http://127.0.0.1:{port} (pid {proc.pid}); this launch has no display"
            check(second.returncode == 0, f"the second launch without a display should exit 0, got {second.returncode}: {second.stderr}")
            check(len(lines) == 1 and lines[0].startswith(want), f"the second launch should print one line starting {want!r}; it printed:\n{second.stderr}")
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    pass
            stop_group(proc, "the headless binary")
        check(proc.returncode == 0, f"the headless binary should exit 0 on SIGTERM, got {proc.returncode}")

    def test_window_opens(self) -> None:
        """The window shows the UI from the app's server, signed in with the admin token."""
        self.desktop = Desktop(self.binary, self.work, self.args.tauri_driver)
        self.desktop.start()
        d = self.desktop
        self.agent = Agent(d.base, d.token)
        url = self.wd.url()
        check(url.startswith(d.base + "/"), f"the window shows {url}, expected the app's server {d.base}")
        check("token=" not in url, f"the token is still in the URL: {url}")
        check(self.wd.js("return sessionStorage.getItem('taskdeck.token')") == d.token, "the page did not keep the admin token")
        wait_for(lambda: "admin" in self.wd.js("return document.getElementById('me').textContent"), "'Signed in as admin'")
        check(self.wd.js("return typeof window.__TAURI_INTERNALS__") == "object", "the page is not in a Tauri webview (no __TAURI_INTERNALS__)")
        check(self.wd.title() == "Taskdeck", f"window title: {self.wd.title()!r}")
        check(d.banners() == [(d.base, str(d.port))], f"expected one 'running with its window on {d.base}' banner, got {d.banners()}")

    def test_approval(self) -> None:
        """(1) request_approval → row + prompt in the window → answered → the agent gets it → notified."""
        message = "Deploy v2 to prod?"
        task = self.agent.start_task("request_approval", {"message": message, "requestedSchema": APPROVAL_SCHEMA})
        self.ids["approved"] = task
        self.wait_row_badge(task, "Needs input")
        wait_for(lambda: self.wd.js(INBOX_TEXT, task) == message, "the task in the 'Needs input' inbox")
        wait_for(lambda: message in self.wd.js("return document.getElementById('input-announcer').textContent"), "the screen-reader announcement")
        wait_for(lambda: re.match(r"\(\d+\) Taskdeck", self.wd.title()), "the window title to count the waiting task")

        card = '.prompt-card[data-key="approval"]'
        self.wd.click(lambda: self.wd.js(INBOX_ITEM, task), lambda: self.wd.find(card), "the inbox entry", landed=lambda: self.wd.js(DETAIL_TASK_ID) == task)
        check(self.wd.js(DETAIL_TASK_ID) == task, "the inbox entry opened another task")
        check(self.wd.js(f"return document.querySelector('{card} .prompt-message').textContent") == message, "the prompt shows the agent's message")

        reason = wait_for(lambda: self.wd.js(FIELD_BY_LABEL, card, "reason"), "the 'reason' field")
        # Too short: the form refuses before anything is sent.
        self.wd.fill(reason, "no")
        self.wd.click(lambda: self.button(card, "Accept"), lambda: self.wd.find(f"{card} .field-error:not([hidden])"), "Accept (too short)")
        err = self.wd.js(f"return document.querySelector('{card} .field-error:not([hidden])').textContent")
        check("at least 3 characters" in err, f"field error: {err!r}")
        check(self.agent.get(task)["status"] == "input_required", "an invalid answer reached the task")

        answer = "Ship it: tests are green"
        self.wd.fill(reason, answer)
        self.wd.click(
            lambda: self.button(card, "Accept"),
            lambda: self.wd.js(f"const c = document.querySelector('{card}'); return !c || c.classList.contains('prompt-gone')"),
            "Accept",
        )
        done = self.agent.wait_status(task, "completed")
        sc = done.get("result", {}).get("structuredContent")
        check(sc == {"action": "accept", "content": {"reason": answer}}, f"the agent got structuredContent {sc}")

        self.wait_row_badge(task, "Completed")
        wait_for(lambda: self.wd.js("const o = document.querySelector('#detail .outcome-good'); return o && o.textContent.includes('Completed')"), "the detail's outcome")
        wait_for(lambda: not self.wd.find(card), "the answered prompt to go away")
        wait_for(lambda: not self.wd.js(INBOX_ITEM, task), "the inbox entry to go away")
        wait_for(lambda: "Accepted by admin" in self.wd.js("return document.querySelector('#detail').textContent"), "'Accepted by admin' in the input rounds")

        def notified():
            return [c for c in notify_calls(self.notify_log) if "needs input" in c["summary"] and c["body"] == message]

        calls = wait_for(notified, f"a Notify call with 'needs input' and {message!r} in {self.notify_log}", timeout=10)
        c = calls[0]
        check(c["app"] == "Taskdeck", f"notification app name {c['app']!r}")
        want = "admin needs input"
        check(c["summary"] == want, f"notification summary {c['summary']!r}, expected {want!r} (the question titles its task: said once, in the body)")
        log(f"  notification: {c['app']}: {c['summary']!r} / {c['body']!r}")

    def test_gateway_approval(self) -> None:
        """(2) A gateway call of upstream fs's write_file waits in the inbox with the server, tool
        and arguments; approved in the window, it reaches the upstream and the file exists."""
        d = self.desktop
        wait_for(lambda: next((s["state"] == "connected" for s in api_get(d.base, "/v1/servers", d.token)[1]["servers"] if s["name"] == "fs"), False), "upstream fs to be connected (/v1/servers)", timeout=20)
        path = d.fs_dir / "approved-in-the-window.txt"
        content = "written after the human approved"
        task = self.agent.start_task("fs__write_file", {"path": str(path), "content": content})
        # A call's approval waits in the inbox's approval queue.
        row = "document.querySelector('#inbox:not([hidden]) #approvals:not([hidden]) li.approval[data-task-id=\"' + arguments[0] + '\"]')"
        wait_for(lambda: self.wd.js(f"return {row}", task), "the gateway call in the approval queue")
        entry = self.wd.js(f"return {row}.textContent", task)
        # The row shows the arguments in one clamped line: a long path is cut in its middle,
        # so its end (the file's name) shows.
        for part in ("write_file", "fs", "in-the-window.txt"):
            check(part in entry, f"the queue row does not show {part!r}: {entry!r}")
        check(not path.exists(), "the file exists before the approval")
        # Opened, the row shows the call exactly.
        self.wd.click(
            lambda: self.wd.js(f"return {row}.querySelector('.approval-summary')", task),
            lambda: self.wd.js(f"const r = {row}; return r && r.querySelector('.approval-args-full')", task),
            "the gateway call's queue row",
        )
        shown = self.wd.js(f"return {row}.querySelector('.approval-args-full').textContent", task)
        for part in (str(path), content):
            check(part in shown, f"the opened row does not show {part!r}: {shown!r}")
        waiting = self.agent.get(task)["status"]
        check(waiting == "input_required", f"the call should still wait for the human (the agent here is admin, who may answer): {waiting}")
        self.wd.click(
            lambda: self.wd.js(f"return {row}.querySelector('.approval-approve')", task),
            lambda: not self.wd.js(f"return {row}", task),
            "Approve",
        )
        done = self.agent.wait_status(task, "completed")
        result = done.get("result") or {}
        check(result.get("isError") is not True, f"the agent got an error: {result}")
        check(path.exists() and path.read_text() == content, f"the file was not written: {path}")
        self.wait_row_badge(task, "Completed")
        rounds = api_get(d.base, f"/v1/tasks/{task}", d.token)[1]["inputRounds"]
        check([r.get("answeredBy") for r in rounds] == ["admin"], f"the input rounds: {rounds}")

    def test_cancel(self) -> None:
        """(2) Cancel from the window, after the confirmation, ends the agent's task as cancelled."""
        task = self.agent.start_task("request_approval", {"message": "Rotate the signing keys?", "requestedSchema": APPROVAL_SCHEMA})
        self.ids["cancelled"] = task
        self.wait_row_badge(task, "Needs input")
        self.open_row(task)
        # The detail is titled by the question, with the tool beside it.
        title = "const t = document.querySelector('#detail .detail-title'); return t && t.textContent"
        wait_for(lambda: (self.wd.js(title) or "").startswith("Rotate the signing keys?"), "the detail title (the question)")
        wait_for(lambda: self.wd.js(DETAIL_BADGE) == "Needs input", "the detail badge 'Needs input'")
        dialog_open = "return document.getElementById('confirm-dialog').open"

        # Backing out keeps the task.
        self.wd.click(lambda: self.button("#detail", "Cancel task…"), lambda: self.wd.js(dialog_open), "Cancel task…")
        check(self.wd.js("return document.getElementById('confirm-title').textContent") == "Cancel this task?", "the confirmation's title")
        self.wd.click(lambda: self.wd.find("#confirm-no"), lambda: not self.wd.js(dialog_open), "Keep running")
        check(self.agent.get(task)["status"] == "input_required", "'Keep running' cancelled the task")

        self.wd.click(lambda: self.button("#detail", "Cancel task…"), lambda: self.wd.js(dialog_open), "Cancel task… (again)")
        check(self.wd.js("return document.getElementById('confirm-yes').textContent") == "Cancel task", "the confirm button's label")
        self.wd.click(lambda: self.wd.find("#confirm-yes"), lambda: not self.wd.js(dialog_open), "Cancel task (confirm)")
        t = self.agent.wait_status(task, "cancelled")
        check(t["status"] == "cancelled", f"tasks/get: {t}")
        wait_for(lambda: self.wd.js(DETAIL_BADGE) == "Cancelled", "the detail badge 'Cancelled'")
        self.wait_row_badge(task, "Cancelled")
        # It leaves the "Needs input" inbox and stays out (older snapshots arriving late, the
        # cancel's own answer or an inbox reload, must not bring it back: InputInbox).
        wait_for(lambda: not self.wd.js(INBOX_ITEM, task), "the cancelled task to leave the 'Needs input' inbox")
        time.sleep(1.0)
        check(not self.wd.js(INBOX_ITEM, task), "the cancelled task came back into the 'Needs input' inbox")

    def server_ids(self, query: str) -> list[str]:
        """Task ids the server lists for `query` (the list the window should show)."""
        status, body = api_get(self.desktop.base, f"/v1/tasks?limit=1000&{query}", self.desktop.token)
        check(status == 200, f"/v1/tasks?{query}: {status} {body}")
        return [t["taskId"] for t in body["tasks"]]

    def test_search_and_filter(self) -> None:
        """(3) Search and the status filter narrow the list."""
        needle = f"needle-{int(time.time() * 1000)}"
        task = self.agent.start_task("request_approval", {"message": f"Answer the {needle} question", "requestedSchema": APPROVAL_SCHEMA})
        self.ids["waiting"] = task
        done, cancelled = self.ids.get("approved"), self.ids.get("cancelled")
        check(done and cancelled, "needs the tasks of the two tests before")
        self.wait_row_badge(task, "Needs input")
        everything = self.server_ids("")
        check({done, cancelled, task} <= set(everything), "the server does not list the test's tasks")
        self.wait_rows(everything, f"all {len(everything)} tasks in the list")

        search = self.wd.find("#search")
        self.wd.fill(search, needle)
        self.wait_rows([task], "the search to leave only the matching task")
        self.wd.fill(search, "")
        self.wd.press(search, "\ue007")  # Enter submits the filter form
        self.wait_rows(everything, "all tasks back after clearing the search")

        for status, expected, label in (("cancelled", cancelled, "Cancelled"), ("completed", done, "Completed"), ("input_required", task, "Needs input")):
            want = self.server_ids(f"status={status}")
            check(expected in want and len(want) < len(everything), f"server's {status} list {want} vs all {everything}")
            chip = f'#status-filters .chip[data-status="{status}"]'
            wait_for(lambda: self.wd.js(f"return document.querySelector('{chip} .chip-count').textContent") == str(len(want)), f"the {status} chip to count {len(want)}")
            self.wd.click(lambda: self.wd.find(chip), lambda: self.wd.js(f"return document.querySelector('{chip}').getAttribute('aria-pressed')") == "true", f"the {status} chip")
            self.wait_rows(want, f"the {status} filter to leave only its {len(want)} task(s)")
            badges = {self.row_badge(i) for i in want}
            check(badges == {label}, f"rows left by the {status} filter show {badges}")

        all_chip = '#status-filters .chip[data-status="all"]'
        self.wd.click(lambda: self.wd.find(all_chip), lambda: self.wd.js(f"return document.querySelector('{all_chip}').getAttribute('aria-pressed')") == "true", "the All chip")
        self.wait_rows(everything, "all tasks back after 'All'")

    def test_screenshot(self) -> None:
        """(4) A screenshot of the window, with a prompt open, in test-artifacts/desktop.png."""
        task = self.ids.get("waiting")
        check(task, "needs the waiting task of the test before")
        card = '.prompt-card[data-key="approval"]'
        self.wd.click(lambda: self.wd.js(INBOX_ITEM, task), lambda: self.wd.js(DETAIL_TASK_ID) == task and self.wd.find(card), "the waiting task's inbox entry", landed=lambda: self.wd.js(DETAIL_TASK_ID) == task)
        reason = wait_for(lambda: self.wd.js(FIELD_BY_LABEL, card, "reason"), "the 'reason' field")
        self.wd.fill(reason, "Looks good to me")
        self.wd.js("document.getElementById('toasts').replaceChildren()")  # earlier notices
        self.wd.js("return new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
        png = self.wd.screenshot()
        w, h = png_size(png)
        check(w >= 800 and h >= 500, f"screenshot is only {w}x{h}")
        check(len(png) > 20_000, f"screenshot is only {len(png)} bytes")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / "desktop.png"
        path.write_bytes(png)
        log(f"  {path} ({w}x{h}, {len(png)} bytes)")

    def test_single_instance(self) -> None:
        """(6) A second launch with the same environment shows the first window and exits quickly,
        without a second server; the first keeps serving."""
        d = self.desktop
        visibility = "return document.visibilityState"
        # Hide the first window (as if the user had put it away) so that the second launch must
        # bring it back: the single-instance plugin calls the first instance, which shows it.
        windows = xdotool("search", "--onlyvisible", "--name", "Taskdeck")
        check(windows, "no visible X window named Taskdeck")
        for w in windows:
            xdotool("windowunmap", "--sync", w)
        wait_for(lambda: self.wd.js(visibility) == "hidden", "the page to be hidden with its window unmapped", timeout=10)
        out_path, err_path = self.work / "second.out", self.work / "second.err"
        t = time.monotonic()
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            proc = subprocess.Popen([str(self.binary)], stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=d.app_env(), start_new_session=True)
        try:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                pass
            took = time.monotonic() - t
            out, err = out_path.read_text(errors="replace"), err_path.read_text(errors="replace")
            check(proc.returncode is not None, f"the second launch is still running after 15 s; stdout:\n{out}\nstderr:\n{err}")
            log(f"  second launch exited with {proc.returncode} after {took:.1f}s; stdout {out.strip()!r}; stderr {err.strip()[-300:]!r}")
            check(proc.returncode == 0, f"the second launch exited with {proc.returncode}; stderr:\n{err}")
            check("Taskdeck is running" not in out, f"the second launch printed a 'running' banner:\n{out}")
            check("already in use" not in err and "headless" not in err, f"the second launch tried to start a server:\n{err}")
            check("already running" in err, f"the second launch does not say that Taskdeck is already running:\n{err}")
        finally:
            stop_group(proc, "the second launch")
        wait_for(lambda: self.wd.js(visibility) == "visible", "the second launch to show the first window again", timeout=10)
        check(xdotool("search", "--onlyvisible", "--name", "Taskdeck"), "the first window is not mapped again")
        check(d.banners() == [(d.base, str(d.port))], f"the first instance's banners: {d.banners()}")
        check(d.app_alive(), "the first instance is gone")
        status, me = api_get(d.base, "/v1/me", d.token)
        check(status == 200 and me.get("principal") == "admin", f"the first instance stopped serving: /v1/me {status} {me}")
        check(self.wd.js("return document.getElementById('conn').dataset.state") == "open", "the window lost its live connection")
        # The window still follows the agent's work.
        task = self.agent.start_task("request_approval", {"message": "Still there?", "requestedSchema": APPROVAL_SCHEMA})
        wait_for(lambda: self.wd.js(INBOX_TEXT, task) == "Still there?", "the new task in the window's inbox")

    def test_window_geometry(self) -> None:
        """The first window lies fully inside the screen, centred, no larger than the screen."""
        wins = wait_for(taskdeck_windows, "a visible X window named Taskdeck")
        check(len(wins) == 1, f"expected one Taskdeck window, found {wins}")
        geo = window_geometry(next(iter(wins)))
        check_on_screen(geo, "the window")
        x, y, w, h = geo
        sw, sh = screen_size()
        check(abs(x - (sw - x - w)) <= 20, f"the window at {w}x{h}+{x}+{y} is not centred horizontally on the {sw}x{sh} screen")
        check(w <= sw * 0.9 + 1 and h <= sh * 0.9 + 1, f"a first window should take at most 90% of the screen; it is {w}x{h} on {sw}x{sh}")
        log(f"  window {w}x{h}+{x}+{y} on a {sw}x{sh} screen")

    def test_saved_state_off_screen(self) -> None:
        """A saved geometry on a monitor that is gone (and too large) opens shrunk and centred on
        this screen; SIGTERM then prints "stopping", exits 0, and the plugin saved where it was."""
        data, config = self.work / "offscreen-data", self.work / "offscreen-config"
        config.mkdir(parents=True, exist_ok=True)
        state = config / "window-state.json"
        sw, sh = screen_size()
        saved = {"width": 3000, "height": 700, "x": 6000, "y": 4000, "prev_x": 6000, "prev_y": 4000,
                 "maximized": False, "visible": True, "decorated": True, "fullscreen": False}
        state.write_text(json.dumps({"main": saved}))
        env = dict(self.desktop.app_env())
        port = free_port()
        env.update(TASKDECK_DATA_DIR=str(data), TASKDECK_CONFIG_DIR=str(config), TASKDECK_PORT=str(port))
        out_path, err_path = self.work / "offscreen.out", self.work / "offscreen.err"
        before = taskdeck_windows()
        proc = own_session_launch(self.binary, env, out_path, err_path)
        try:
            def banner():
                check(proc.poll() is None, f"the launch exited ({proc.returncode}): {err_path.read_text(errors='replace')[-800:]}")
                return BANNER_RE.search(out_path.read_text(errors="replace"))

            wait_for(banner, "the off-screen launch's banner", timeout=30)
            win = wait_for(lambda: next(iter(taskdeck_windows() - before), None), "the off-screen launch's window")
            geo = wait_for(lambda: (lambda g: g if g[2] < sw else None)(window_geometry(win)), "the window to be shrunk to the screen", timeout=10)
            check_on_screen(geo, "the window saved off-screen")
            x, y, w, h = geo
            check(h == 700, f"the saved height 700 should be kept, the window is {w}x{h}")
            check(abs(x - (sw - x - w)) <= 20, f"the window at {w}x{h}+{x}+{y} is not centred on the {sw}x{sh} screen")
            log(f"  saved 3000x700+6000+4000 -> window {w}x{h}+{x}+{y}")
            pid = child_running(proc, self.binary)
            check(pid, "the window process is not running")
            # The page's event stream is open by now: stopping must not wait for it to end.
            wait_for(lambda: established(port) > 0, "the window's connections to the server", timeout=15)
            time.sleep(1.0)  # the page's boot opens /v1/events once its list is drawn
            began = time.monotonic()
            os.kill(pid, signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                raise Failure("the window process did not stop within 15 s of SIGTERM") from None
            took = time.monotonic() - began
            log(f"  stopped {took:.2f} s after SIGTERM")
            check(took < 2.5, f"the window process took {took:.2f} s to stop (open event streams must end at once)")
            err = err_path.read_text(errors="replace")
            check("taskdeck: stopping" in err, f"SIGTERM should print 'taskdeck: stopping'; exit {proc.returncode}, stderr:\n{err}")
            check(proc.returncode == 0, f"SIGTERM should end the window process with 0, got {proc.returncode}; stderr:\n{err}")
            main = json.loads(state.read_text()).get("main", {})
            sx, sy = main.get("x", -1), main.get("y", -1)
            check(0 <= sx < sw and 0 <= sy < sh, f"the state saved at exit should be on screen: {main}")
        finally:
            stop_group(proc, "the off-screen launch")

    def test_second_launch_other_session(self) -> None:
        """A second launch with the same data dir from another D-Bus session says where Taskdeck
        runs (its URL and pid), opens it in the user's browser signed in (the menu gives a launch
        no terminal to read), and exits 0, without trying the port."""
        d = self.desktop
        out_path, err_path = self.work / "other-session.out", self.work / "other-session.err"
        # The user's browser, as xdg-open finds it on a desktop without a default browser.
        opened = self.work / "browser-opened.txt"
        browser = self.work / "browser.sh"
        browser.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" >> '{opened}'\n")
        browser.chmod(0o755)
        # No desktop entry claims http: (this machine's chromium would), so xdg-open takes $BROWSER.
        bare = str(self.work / "no-mimeapps")
        env = dict(d.app_env(), BROWSER=str(browser), XDG_CONFIG_HOME=bare, XDG_DATA_HOME=bare, XDG_DATA_DIRS=bare, XDG_CONFIG_DIRS=bare)
        proc = own_session_launch(self.binary, env, out_path, err_path)
        try:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                pass
            out, err = out_path.read_text(errors="replace"), err_path.read_text(errors="replace")
            check(proc.returncode is not None, f"the launch is still running after 15 s; stdout:\n{out}\nstderr:\n{err}")
            log(f"  exit {proc.returncode}; stderr {err.strip()!r}")
            check(proc.returncode == 0, f"the launch exited with {proc.returncode}; stderr:\n{err}")
            check("already in use" not in err and "Taskdeck is running" not in out, f"the launch tried to serve:\n{out}\n{err}")
            pid = child_running(d.proc, self.binary) if d.proc else None
            want = f"Taskdeck is already running on {d.base} (pid {pid}); its window is on another desktop session"
            check(want in err, f"stderr should say {want!r}; it is:\n{err}")
            ours = [line for line in err.splitlines() if not line.startswith("dbus-daemon[")]
            check(len(ours) == 1, f"the launch should print one line (besides its D-Bus daemon's):\n{err}")
            wait_for(opened.exists, "the second launch to open the browser", timeout=10)
            urls = opened.read_text().split()
            check(urls == [f"{d.base}/#token={d.token}"], f"the browser should get the UI's address with the admin token once; it got {urls}")
        finally:
            stop_group(proc, "the launch from another session")
        check(d.app_alive(), "the first instance is gone")
        status, _ = api_get(d.base, "/v1/me", d.token)
        check(status == 200, f"the first instance stopped serving: /v1/me {status}")

    def test_notification_click(self) -> None:
        """(7) Clicking a task's desktop notification brings the window back, open on that task."""
        subprocess.run(["dunstctl", "close-all"], check=False, capture_output=True)
        wait_for(lambda: subprocess.run(["dunstctl", "count", "displayed"], capture_output=True, text=True).stdout.strip() == "0", "dunst to show no notification")
        # Look at another task, then put the window away.
        other = self.ids["approved"]
        self.wd.js("window.location.hash = 'task=' + arguments[0]", other)
        wait_for(lambda: self.wd.js(DETAIL_TASK_ID) == other, "the window to show another task first")
        for w in xdotool("search", "--onlyvisible", "--name", "Taskdeck"):
            xdotool("windowunmap", "--sync", w)
        wait_for(lambda: self.wd.js("return document.visibilityState") == "hidden", "the window to be hidden", timeout=10)
        message = "Open the firewall for the demo?"
        task = self.agent.start_task("request_approval", {"message": message, "requestedSchema": APPROVAL_SCHEMA})
        wait_for(lambda: any(c["body"] == message for c in notify_calls(self.notify_log)), "the task's Notify call", timeout=10)
        wait_for(lambda: subprocess.run(["dunstctl", "count", "displayed"], capture_output=True, text=True).stdout.strip() == "1", "dunst to show the notification")
        # What a click does: dunst invokes the notification's default action.
        r = subprocess.run(["dunstctl", "action", "0"], capture_output=True, text=True)
        check(r.returncode == 0, f"dunstctl action: {r.stderr}")
        wait_for(lambda: self.wd.js("return document.visibilityState") == "visible", "the click to show the window", timeout=10)
        wait_for(lambda: self.wd.js(DETAIL_TASK_ID) == task, "the window to open the notified task")
        check(self.wd.js(f"return !!document.querySelector('#detail .prompt-card[data-key=\"approval\"]')"), "the task's prompt is not shown")

    # ---------------------------------------------------------- actionable notifications

    def approval_notification(self, path: Path) -> dict:
        """Hides the window, clears dunst, starts a gateway call of fs's write_file on `path`
        (the policy asks the human), and returns its notification once dunst shows it alone."""
        subprocess.run(["dunstctl", "close-all"], check=False, capture_output=True)
        wait_for(lambda: dunst_displayed() == "0", "dunst to show no notification")
        for w in xdotool("search", "--onlyvisible", "--name", "Taskdeck"):
            xdotool("windowunmap", "--sync", w)
        wait_for(lambda: self.wd.js("return document.visibilityState") == "hidden", "the window to be hidden", timeout=10)
        d = self.desktop
        wait_for(lambda: next((s["state"] == "connected" for s in api_get(d.base, "/v1/servers", d.token)[1]["servers"] if s["name"] == "fs"), False), "upstream fs to be connected (/v1/servers)", timeout=20)
        task = self.agent.start_task("fs__write_file", {"path": str(path), "content": "from the notification"})

        def notified():
            return next((c for c in notify_calls(self.notify_log) if str(path) in c["body"] and "approve" in c["actions"]), None)

        call = wait_for(notified, f"a Notify call with Approve / Deny for {path.name}", timeout=10)
        check(call["actions"].get("approve") == "Approve" and call["actions"].get("deny") == "Deny", f"the notification's actions: {call['actions']}")
        check(call["actions"].get("default") == "Open", f"a click on the notification should open the window: {call['actions']}")
        check(call["app"] == "Taskdeck", f"notification app name {call['app']!r}")
        wait_for(lambda: dunst_displayed() == "1", "dunst to show the notification")
        check(self.agent.get(task)["status"] == "input_required", "the call does not wait for the human")
        call["taskId"] = task
        log(f"  notification: {call['summary']!r} / {call['body']!r} / {call['actions']}")
        return call

    def pick_in_menu(self, action: str) -> None:
        """What the user does in dunst: opens the notification's menu (`dunstctl context`, which
        makes dunst run its menu program) and picks `action`; dunst emits ActionInvoked."""
        check(self.menu_choice, "run through run.sh: no --menu-choice file for dunst's menu")
        before = len(action_signals(self.notify_log))
        self.menu_choice.write_text(action)
        r = subprocess.run(["dunstctl", "context"], capture_output=True, text=True, timeout=10)
        check(r.returncode == 0, f"dunstctl context: {r.stderr}")
        signals = wait_for(lambda: action_signals(self.notify_log)[before:], f"dunst to emit ActionInvoked {action!r}", timeout=10)
        check([a for _, a in signals] == [action], f"ActionInvoked signals: {signals}")

    def wait_closed(self, path: Path, what: str) -> None:
        """Waits until the approval notification of the call on `path` is closed by Taskdeck:
        in dunst's history, with a NotificationClosed signal of reason 3 (closed by a
        CloseNotification call; 1 would be expired, 2 dismissed)."""
        t = time.monotonic()
        entry = wait_for(lambda: next((h for h in dunst_history() if str(path) in h.get("body", "")), None), what, timeout=5)
        closed = [reason for nid, reason in closed_signals(self.notify_log) if nid == entry["id"]]
        check(closed == [3], f"notification {entry['id']} closed with reasons {closed}, expected [3] (closed by Taskdeck)")
        log(f"  notification {entry['id']} closed {time.monotonic() - t:.1f}s after the task completed")

    def task_detail(self, task_id: str) -> dict:
        status, body = api_get(self.desktop.base, f"/v1/tasks/{task_id}", self.desktop.token)
        check(status == 200, f"/v1/tasks/{task_id}: {status} {body}")
        return body

    def wait_settled(self, task_id: str) -> dict:
        return wait_for(lambda: (lambda b: b["task"]["status"] == "completed" and b)(self.task_detail(task_id)), f"task {task_id[:8]} to complete (/v1)", timeout=15)

    def test_notification_approve(self) -> None:
        """(8) Approve in the notification of a gateway call: the call runs, the notification
        closes, and the window stays hidden."""
        path = self.desktop.fs_dir / "approved-from-the-notification.txt"
        call = self.approval_notification(path)
        t = time.monotonic()
        self.pick_in_menu("approve")
        log(f"  ActionInvoked {time.monotonic() - t:.1f}s after dunstctl context")
        detail = self.wait_settled(call["taskId"])
        log(f"  completed {time.monotonic() - t:.1f}s after dunstctl context")
        result = detail["task"].get("result") or {}
        check(result.get("isError") is not True, f"the agent got an error: {result}")
        check(path.exists() and path.read_text() == "from the notification", f"the file was not written: {path}")
        rounds = [r for r in detail["inputRounds"] if r["key"] == "approve"]
        check(rounds and rounds[0]["response"].get("action") == "accept" and rounds[0]["answeredBy"] == "admin", f"the approval's input round: {rounds}")
        self.wait_closed(path, "the answered notification to close")
        check(self.wd.js("return document.visibilityState") == "hidden", "approving from the notification opened the window")

    def test_notification_deny(self) -> None:
        """(9) Deny in the notification of a gateway call: the agent gets the refusal, the file
        is not written, the notification closes."""
        path = self.desktop.fs_dir / "denied-from-the-notification.txt"
        call = self.approval_notification(path)
        self.pick_in_menu("deny")
        detail = self.wait_settled(call["taskId"])
        result = detail["task"].get("result") or {}
        text = " ".join(c.get("text", "") for c in result.get("content", []))
        check(result.get("isError") is True and "declined" in text, f"the agent should get the refusal: {result}")
        check(not path.exists(), f"the denied call wrote {path}")
        rounds = [r for r in detail["inputRounds"] if r["key"] == "approve"]
        check(rounds and rounds[0]["response"].get("action") == "decline" and rounds[0]["answeredBy"] == "admin", f"the approval's input round: {rounds}")
        self.wait_closed(path, "the answered notification to close")
        check(self.wd.js("return document.visibilityState") == "hidden", "denying from the notification opened the window")

    def test_notification_edit_then_answered_elsewhere(self) -> None:
        """(10) Edit… in a call's notification shows the window on the call; answered elsewhere
        (through /v1, as the window or the CLI do), the notification closes."""
        path = self.desktop.fs_dir / "approved-elsewhere.txt"
        call = self.approval_notification(path)
        check(call["actions"].get("edit") == "Edit…", f"a call that may be edited offers Edit…: {call['actions']}")
        self.pick_in_menu("edit")
        wait_for(lambda: self.wd.js("return document.visibilityState") == "visible", "Edit… to show the window", timeout=10)
        wait_for(lambda: self.wd.js(DETAIL_TASK_ID) == call["taskId"], "the window to open the call's task")
        check(self.agent.get(call["taskId"])["status"] == "input_required", "Edit… answered the call")
        body = json.dumps({"inputResponses": {"approve": {"action": "accept"}}}).encode()
        status, _, raw = http_request("POST", f"{self.desktop.base}/v1/tasks/{call['taskId']}/input", body,
                                      {"Authorization": f"Bearer {self.desktop.token}", "Content-Type": "application/json"}, timeout=10)
        check(status == 200 and json.loads(raw)["accepted"] == ["approve"], f"answer through /v1: {status} {raw[:300]!r}")
        self.wait_settled(call["taskId"])
        check(path.exists(), f"the approved call did not write {path}")
        self.wait_closed(path, "the notification to close once answered elsewhere")

    def app_pid(self) -> int:
        d = self.desktop
        for pid in process_group_alive(d.proc.pid) if d.proc else []:
            try:
                if os.readlink(f"/proc/{pid}/exe") == str(self.binary):
                    return pid
            except OSError:
                pass
        raise Failure("the app launched for the window is not running")

    def test_quit_closes_notifications_then_start_notifies_again(self) -> None:
        """(11) Quitting closes the approval notifications still on screen (their Approve would
        reach nothing); the next start notifies the question that still waits, and Approve in
        that notification runs the call."""
        path = self.desktop.fs_dir / "asked-before-a-restart.txt"
        d = self.desktop
        # Only this call waits at the restart: with more than three waiting, the start sums
        # them up in one notification instead (its text has a unit test in notices.rs).
        status, listed = api_get(d.base, "/v1/tasks?status=input_required&limit=100", d.token)
        check(status == 200, f"/v1/tasks?status=input_required: {status} {listed}")
        for t in listed["tasks"]:
            status, _, raw = http_request("POST", f"{d.base}/v1/tasks/{t['taskId']}/cancel", None,
                                          {"Authorization": f"Bearer {d.token}"}, timeout=10)
            check(status in (200, 202), f"cancel {t['taskId']}: {status} {raw[:200]!r}")
        call = self.approval_notification(path)
        os.kill(self.app_pid(), signal.SIGTERM)
        wait_for(lambda: not d.app_alive(), "the app to stop after SIGTERM", timeout=15)
        wait_for(lambda: dunst_displayed() == "0", "quitting to close the call's notification", timeout=5)
        entry = wait_for(lambda: next((h for h in dunst_history() if str(path) in h.get("body", "")), None), "the notification in dunst's history", timeout=5)
        closed = [reason for nid, reason in closed_signals(self.notify_log) if nid == entry["id"]]
        check(closed == [3], f"notification {entry['id']} closed with reasons {closed}, expected [3] (closed by Taskdeck at quit)")
        d.stop()
        asked = lambda: [c for c in notify_calls(self.notify_log) if str(path) in c["body"] and "approve" in c["actions"]]  # noqa: E731
        check(len(asked()) == 1, f"Notify calls for the call before the restart: {len(asked())}")
        d.start()
        wait_for(lambda: len(asked()) == 2, "the restarted Taskdeck to notify the waiting call again", timeout=20)
        check(self.agent.get(call["taskId"])["status"] == "input_required", "the call does not wait for the human after the restart")
        for w in xdotool("search", "--onlyvisible", "--name", "Taskdeck"):
            xdotool("windowunmap", "--sync", w)
        self.pick_in_menu("approve")
        self.wait_settled(call["taskId"])
        check(path.exists() and path.read_text() == "from the notification", f"the call approved after the restart did not write {path}")

    # ------------------------------------------------------------------ driver

    def main(self) -> int:
        check(self.binary.is_file() and os.access(self.binary, os.X_OK), f"no executable at {self.binary}")
        check(os.environ.get("DISPLAY"), "DISPLAY is not set: run this through run.sh (xvfb-run)")
        check(os.environ.get("DBUS_SESSION_BUS_ADDRESS"), "no D-Bus session bus: run this through run.sh (dbus-run-session)")
        log(f"binary {self.binary}, display {os.environ['DISPLAY']}, work dir {self.work}")
        for old in ARTIFACTS.glob("desktop-failure-*.png"):  # from an earlier run
            old.unlink()
        try:
            self.run("no display: headless fallback prints the UI link and the token works", self.test_no_display_fallback)
            self.run("the window opens on the app's UI, signed in", self.test_window_opens)
            self.run("the window opens fully on screen, centred, at most 90% of it", self.test_window_geometry, True)
            self.run("approval: row and prompt appear, answered in the window, agent gets it, notification sent", self.test_approval, True)
            self.run("gateway: an upstream call waits in the inbox with server, tool and arguments; approved in the window, it runs", self.test_gateway_approval, True)
            self.run("cancel from the window (after confirming) ends the agent's task as cancelled", self.test_cancel, True)
            self.run("search and the status filter narrow the list", self.test_search_and_filter, True)
            self.run("screenshot of the window saved to test-artifacts/desktop.png", self.test_screenshot, True)
            self.run("second launch shows the first window and exits quickly; the first keeps serving", self.test_single_instance, True)
            self.run("a launch from another D-Bus session says where Taskdeck runs and exits 0", self.test_second_launch_other_session, True)
            self.run("a saved geometry off every monitor opens on screen; SIGTERM prints 'stopping', exits 0, saves", self.test_saved_state_off_screen, True)
            self.run("clicking a notification shows the window on that task", self.test_notification_click, True)
            self.run("Approve in a gateway call's notification runs the call without opening the window", self.test_notification_approve, True)
            self.run("Deny in a gateway call's notification gives the agent the refusal", self.test_notification_deny, True)
            self.run("Edit… in a call's notification opens the window on it; answered elsewhere, the notification closes", self.test_notification_edit_then_answered_elsewhere, True)
            self.run("quitting closes the open notifications; the next start notifies the waiting call again", self.test_quit_closes_notifications_then_start_notifies_again, True)
        finally:
            if self.desktop:
                drops = self.desktop.wd.drops if self.desktop.wd else 0
                self.desktop.stop()
                log(f"window stopped (WebDriver connection drops retried: {drops})")
        passed = sum(1 for _, ok, _ in self.results if ok)
        failed = len(self.results) - passed
        for name, ok, why in self.results:
            print(f"{'PASS' if ok else 'FAIL'}  {name}" + ("" if ok else f"\n      {why.splitlines()[0] if why else ''}"), flush=True)
        if self.restarts:
            print(f"NOTE  the window was restarted {self.restarts} time(s) after WebKitWebDriver lost its session", flush=True)
        if self.args.summary:
            Path(self.args.summary).write_text(f"{passed} {failed}\n")
        else:
            print(f"desktop e2e: {passed} passed, {failed} failed", flush=True)
        return 0 if failed == 0 else 1


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--binary", required=True, help="the taskdeck desktop binary")
    p.add_argument("--work-dir", required=True, help="a fresh directory for data dirs and logs")
    p.add_argument("--notify-log", required=True, help="dbus-monitor's log of Notify calls and ActionInvoked signals")
    p.add_argument("--menu-choice", help="the file dunst's context menu program (dunst-menu.sh) reads the action to pick from")
    p.add_argument("--tauri-driver", default=shutil.which("tauri-driver") or str(Path.home() / ".cargo/bin/tauri-driver"))
    p.add_argument("--budget", type=float, default=160.0, help="seconds after which the remaining tests are not started")
    p.add_argument("--summary", help="write 'PASSED FAILED' here instead of printing the final line")
    args = p.parse_args()

    def on_term(signum, _frame):
        raise SystemExit(f"stopped by signal {signum}")

    signal.signal(signal.SIGTERM, on_term)
    Path(args.work_dir).mkdir(parents=True, exist_ok=True)
    return Suite(args).main()


if __name__ == "__main__":
    sys.exit(main())
