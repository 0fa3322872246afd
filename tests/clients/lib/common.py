"""Shared helpers for the Python client scripts: the check reporter and the "human" (Taskdeck's
/v1 API with the admin token). Configuration comes from run.sh (see lib/common.mjs):
TD_BASE, TD_MCP_URL, TD_AGENT_TOKEN, TD_AGENT_NAME, TD_ADMIN_TOKEN, TD_FS_DIR."""

from __future__ import annotations

import asyncio
import json
import os
import random
import string
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Awaitable, Callable


def _must(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        print(f"missing environment variable {name} (run this through tests/clients/run.sh)", file=sys.stderr)
        sys.exit(2)
    return value


BASE = _must("TD_BASE")
MCP_URL = _must("TD_MCP_URL")
AGENT_TOKEN = _must("TD_AGENT_TOKEN")
AGENT_NAME = _must("TD_AGENT_NAME")
ADMIN_TOKEN = _must("TD_ADMIN_TOKEN")
FS_DIR = _must("TD_FS_DIR")  # the directory the gateway's upstream "fs" (server-filesystem) serves
GATEWAY_APPROVAL = "approve"  # the human-only request key of a gateway call waiting for approval

TERMINAL = ("completed", "failed", "cancelled")
MISSING_CWD = "/nonexistent/taskdeck-client-test-dir"
NOTE_SCHEMA = {
    "type": "object",
    "properties": {"note": {"type": "string", "title": "Note"}},
    "required": ["note"],
}


def unique(label: str) -> str:
    return f"{label}-{os.getpid()}-{''.join(random.choices(string.ascii_lowercase + string.digits, k=6))}"


def show(value: Any) -> str:
    if isinstance(value, BaseException):
        text = f"{type(value).__name__}: {value}"
        err = getattr(value, "error", None)
        if err is not None and hasattr(err, "model_dump"):
            text += f" {err.model_dump(by_alias=True, exclude_none=True)}"
        if isinstance(value, BaseExceptionGroup):
            text += " [" + "; ".join(show(e) for e in value.exceptions) + "]"
    elif hasattr(value, "model_dump"):
        text = json.dumps(value.model_dump(by_alias=True, mode="json", exclude_none=True), default=str)
    else:
        try:
            text = json.dumps(value, default=lambda o: o.model_dump(by_alias=True, mode="json", exclude_none=True) if hasattr(o, "model_dump") else str(o))
        except Exception:
            text = repr(value)
    text = " ".join(text.split())
    return text if len(text) <= 1500 else text[:1500] + "…"


class Reporter:
    def __init__(self, client: str) -> None:
        self.client = client
        self.passed = 0
        self.failed = 0

    def check(self, name: str, ok: Any, observed: Any = None) -> bool:
        if ok:
            self.passed += 1
            print(f"ok     {self.client}: {name}", flush=True)
        else:
            self.failed += 1
            print(f"FAILED {self.client}: {name} — observed: {show(observed)}", flush=True)
        return bool(ok)

    def note(self, text: str) -> None:
        print(f"  note {self.client}: {text}", flush=True)

    async def scenario(self, name: str, fn: Callable[[], Awaitable[None]], timeout: float = 30) -> None:
        try:
            await asyncio.wait_for(fn(), timeout)
        except asyncio.TimeoutError:
            self.check(f"{name}: ran to the end", False, f"scenario timed out after {timeout} s")
        except BaseException as e:  # noqa: BLE001 - one FAILED line per scenario, never a crash
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            self.check(f"{name}: ran to the end", False, e)

    def finish(self) -> None:
        print(f"{self.client}: {self.passed} passed, {self.failed} failed", flush=True)
        sys.stdout.flush()
        os._exit(0 if self.failed == 0 else 1)


# ---- the human: /v1 with the admin token ----------------------------------------------------


def _v1(method: str, path: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(BASE + path, data=data, method=method)
    req.add_header("authorization", f"Bearer {ADMIN_TOKEN}")
    if data is not None:
        req.add_header("content-type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=10) as res:
            return json.loads(res.read() or b"null")
    except urllib.error.HTTPError as e:
        raise RuntimeError(f"{method} {path}: HTTP {e.code} {e.read().decode(errors='replace')}") from None


async def v1(method: str, path: str, body: Any = None) -> Any:
    return await asyncio.to_thread(_v1, method, path, body)


class Human:
    async def inbox(self) -> list[dict]:
        q = urllib.parse.urlencode({"status": "input_required", "principal": AGENT_NAME, "limit": "200"})
        return (await v1("GET", f"/v1/tasks?{q}"))["tasks"]

    async def detail(self, task_id: str) -> dict:
        return await v1("GET", f"/v1/tasks/{urllib.parse.quote(task_id)}")

    async def wait_for_request(self, key: str, task_id: str | None = None, match: Callable[[dict], bool] | None = None, timeout: float = 10) -> dict:
        """Waits until a task of this agent (by id, or matching `match`) asks the human for `key`."""
        deadline = time.monotonic() + timeout
        while True:
            tasks = await self.inbox()
            for t in tasks:
                if (t["taskId"] == task_id if task_id else match(t)) and key in (t.get("inputRequests") or {}):
                    return t
            if task_id:
                task = (await self.detail(task_id))["task"]
                if task["status"] in TERMINAL:
                    raise RuntimeError(f"task ended {task['status']} ({task.get('statusMessage', '')}) before the human could answer {key!r}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the human never saw input request {key!r} (inbox: {[(t['taskId'], t.get('tool'), list((t.get('inputRequests') or {}).keys())) for t in tasks]})")
            await asyncio.sleep(0.1)

    async def answer(self, task_id: str, key: str, response: dict) -> dict:
        return await v1("POST", f"/v1/tasks/{urllib.parse.quote(task_id)}/input", {"inputResponses": {key: response}})

    async def approve_call(self, task_id: str) -> dict:
        """Approves gateway call `task_id` once it waits for the human; returns the inbox task
        (its inputRequests.approve.params.message names the server, tool and arguments)."""
        asked = await self.wait_for_request(GATEWAY_APPROVAL, task_id=task_id)
        await self.answer(task_id, GATEWAY_APPROVAL, {"action": "accept", "content": {}})
        return asked

    async def wait_for_status(self, task_id: str, statuses: tuple[str, ...], timeout: float = 10) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            task = (await self.detail(task_id))["task"]
            if task["status"] in statuses or time.monotonic() > deadline:
                return task
            await asyncio.sleep(0.1)

    async def cancel_leftovers(self) -> None:
        q = urllib.parse.urlencode({"status": "working,input_required", "principal": AGENT_NAME, "limit": "200"})
        try:
            tasks = (await v1("GET", f"/v1/tasks?{q}"))["tasks"]
        except Exception:
            return
        for t in tasks:
            try:
                await v1("POST", f"/v1/tasks/{urllib.parse.quote(t['taskId'])}/cancel")
            except Exception:
                pass


human = Human()


def fresh_file(label: str) -> str:
    """A file in the gateway upstream's directory that does not exist yet."""
    return f"{FS_DIR}/{unique(label)}.txt"


def text_of(result: Any) -> str:
    """The text blocks of a CallToolResult (SDK model or dict)."""
    content = getattr(result, "content", None)
    if content is None and isinstance(result, dict):
        content = result.get("content")
    out = []
    for block in content or []:
        text = getattr(block, "text", None)
        if text is None and isinstance(block, dict):
            text = block.get("text")
        if isinstance(text, str):
            out.append(text)
    return "\n".join(out)


async def find_task(tool: str, match: Callable[[dict], bool], timeout: float = 10) -> dict:
    """This agent's newest task of `tool` whose listing entry satisfies `match` (any status)."""
    deadline = time.monotonic() + timeout
    while True:
        q = urllib.parse.urlencode({"principal": AGENT_NAME, "tool": tool, "limit": "200"})
        for t in (await v1("GET", f"/v1/tasks?{q}"))["tasks"]:
            if match(t):
                return t
        if time.monotonic() > deadline:
            raise RuntimeError(f"no {tool} task of {AGENT_NAME} matched")
        await asyncio.sleep(0.1)


def record(seen: list, entry: dict) -> None:
    """Appends a status observation unless it repeats the previous one."""
    if not seen or seen[-1] != entry:
        seen.append(entry)
