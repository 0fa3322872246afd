"""The Python SDK client (`mcp`, pinned in run.sh): mcp.Client in mode "auto" (server/discover,
then the 2026-07-28 era) and, for one scenario, mode "legacy" (2025-11-25 initialize + session).

This SDK has no task API: it does not declare the io.modelcontextprotocol/tasks extension, so
Taskdeck answers a task tool at once with an ordinary CallToolResult carrying the handle in
structuredContent.task, and the agent follows up with Taskdeck's task_status / task_respond /
task_cancel tools, all through the SDK's call_tool. The SDK's native input path on 2026-07-28 is
an InputRequiredResult (MRTR) fulfilled by elicitation_callback; the agent-answered scenario
accepts either that or inputRequests shown by task_status and answered with task_respond, and
checks that the agent's own elicitation handler produced the answer either way.

Through the gateway (upstream "fs", server-filesystem, as fs__TOOL) the same holds: a quick
read is answered with its result, a write waiting for the human with the handle.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from typing import Any

import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from lib.common import (
    AGENT_NAME,
    AGENT_TOKEN,
    MCP_URL,
    MISSING_CWD,
    NOTE_SCHEMA,
    TERMINAL,
    Reporter,
    fresh_file,
    human,
    record,
    show,
    text_of,
    unique,
)

r = Reporter("python-mcp")
agent_answers: dict[str, dict[str, Any]] = {}  # elicitation message -> content the agent accepts with
elicitations: list[types.ElicitRequestParams] = []


class WarningCollector(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(f"{record.name}: {record.getMessage()}")


sdk_warnings = WarningCollector()
logging.getLogger("mcp").addHandler(sdk_warnings)


async def elicitation_callback(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    """The agent's own elicitation handler: accepts what the test registered for that message."""
    elicitations.append(params)
    content = agent_answers.get(params.message)
    if content is None:
        return types.ElicitResult(action="decline")
    return types.ElicitResult(action="accept", content=content)


def sc(result: Any) -> dict:
    return getattr(result, "structured_content", None) or {}


async def task_status(client: Client, task_id: str) -> dict:
    res = await client.call_tool("task_status", {"taskId": task_id})
    return sc(res).get("task") or {"_unparsed": res.model_dump(by_alias=True, mode="json", exclude_none=True)}


async def poll_until_terminal(client: Client, task_id: str, seen: list, timeout: float = 12, on_input=None) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        task = await task_status(client, task_id)
        record(seen, {"status": task.get("status"), "statusMessage": task.get("statusMessage"), "inputRequests": list((task.get("inputRequests") or {}).keys())})
        if task.get("status") in TERMINAL or time.monotonic() > deadline:
            return task
        if on_input and task.get("status") == "input_required":
            await on_input(task)
        await asyncio.sleep(0.15)


async def main() -> None:
    async with create_mcp_http_client(headers={"Authorization": f"Bearer {AGENT_TOKEN}"}) as http, create_mcp_http_client(headers={"Authorization": f"Bearer {AGENT_TOKEN}"}) as http2:
        plain = Client(streamable_http_client(MCP_URL, http_client=http), mode="auto", client_info=types.Implementation(name="python-mcp-no-elicitation", version="1.0.0"), read_timeout_seconds=15)
        elicit = Client(streamable_http_client(MCP_URL, http_client=http2), mode="auto", client_info=types.Implementation(name="python-mcp-elicitation", version="1.0.0"), elicitation_callback=elicitation_callback, read_timeout_seconds=15)
        stack = contextlib.AsyncExitStack()
        try:
            await stack.enter_async_context(plain)
            await stack.enter_async_context(elicit)
        except BaseException as e:  # noqa: BLE001
            r.check("connect (mode auto)", False, e)
            r.finish()
        r.check("mode auto negotiates the 2026-07-28 era (server/discover)", plain.protocol_version == "2026-07-28", plain.protocol_version)

        async def human_answered() -> None:
            message = unique("python-mcp: may I deploy?")
            note = unique("from-the-human")
            started = time.monotonic()
            res = await plain.call_tool("request_approval", {"message": message, "requestedSchema": NOTE_SCHEMA})
            handle = sc(res).get("task") or {}
            r.check("human-answered approval: tools/call answers at once with the task handle in structuredContent.task", isinstance(handle.get("taskId"), str) and not res.is_error and time.monotonic() - started < 5, res)
            task_id = handle.get("taskId")
            if not task_id:
                return

            async def answer() -> dict:
                await asyncio.sleep(1.0)
                await human.wait_for_request("approval", task_id=task_id)
                return await human.answer(task_id, "approval", {"action": "accept", "content": {"note": note}})

            answering = asyncio.create_task(answer())
            seen: list = []
            final = await poll_until_terminal(plain, task_id, seen)
            try:
                answered = await answering
            except Exception as e:  # noqa: BLE001
                answered = e
            waiting = [s for s in seen if s["status"] not in TERMINAL]
            r.check("human-answered approval: the human answers it through POST /v1/tasks/{id}/input", isinstance(answered, dict) and "approval" in answered.get("accepted", []), answered)
            r.check("human-answered approval: task_status reads working (this client declared no elicitation), never input_required", waiting and all(s["status"] == "working" for s in waiting), seen)
            r.check("human-answered approval: the working statusMessage says it waits for a human", any(s["status"] == "working" and "human" in (s["statusMessage"] or "").lower() for s in seen), seen)
            out = (final.get("result") or {}).get("structuredContent") or {}
            r.check("human-answered approval: task_status returns the human's answer (completed, action accept, content.note)", final.get("status") == "completed" and out.get("action") == "accept" and (out.get("content") or {}).get("note") == note, final)

        await r.scenario("request_approval answered by the human", human_answered)

        async def agent_answered() -> None:
            message = unique("python-mcp: agent, confirm?")
            note = unique("from-the-agent")
            agent_answers[message] = {"note": note}
            before = len(elicitations)
            res = await elicit.call_tool("request_approval", {"message": message, "requestedSchema": NOTE_SCHEMA})
            handle = sc(res).get("task") or {}
            paths: list[str] = []
            if not handle.get("taskId") and sc(res).get("action"):
                # The server drove the SDK's MRTR loop inside tools/call and returned the final answer.
                paths.append("mrtr on tools/call")
                out, task_id, final = sc(res), None, {"status": "completed", "result": {"structuredContent": sc(res)}}
            else:
                task_id = handle.get("taskId")
                r.check("agent-answered approval: tools/call answers with the task handle", isinstance(task_id, str), res)
                if not task_id:
                    return

                async def on_input(task: dict) -> None:
                    # task_status showed inputRequests: the agent answers them with task_respond,
                    # producing each answer with its own elicitation handler.
                    responses = {}
                    for key, req in (task.get("inputRequests") or {}).items():
                        params = types.ElicitRequest.model_validate(req).params
                        result = await elicitation_callback(None, params)
                        responses[key] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
                    paths.append("task_respond")
                    resp = await elicit.call_tool("task_respond", {"taskId": task_id, "inputResponses": responses})
                    r.check("agent-answered approval: task_respond accepts the agent's answer", not resp.is_error, resp)

                seen: list = []
                final = await poll_until_terminal(elicit, task_id, seen, on_input=on_input)
                if len(elicitations) > before and "task_respond" not in paths:
                    paths.append("mrtr on task_status")
                out = (final.get("result") or {}).get("structuredContent") or {}
            r.note(f"agent-answered approval went through: {paths or ['nothing']}")
            asked = [p for p in elicitations[before:] if p.message == message]
            r.check("agent-answered approval: the agent's elicitation handler is asked for this approval (once)", len(asked) == 1, [p.message for p in elicitations[before:]])
            r.check("agent-answered approval: the final result is the agent's answer (completed, action accept, content.note)", final.get("status") == "completed" and out.get("action") == "accept" and (out.get("content") or {}).get("note") == note, final)
            if task_id:
                d = await human.detail(task_id)
                rnd = next((x for x in d.get("inputRounds") or [] if x.get("key") == "approval"), None)
                r.check("agent-answered approval: Taskdeck records the agent as the one who answered", rnd and rnd.get("answeredBy") == AGENT_NAME, rnd)

        await r.scenario("request_approval answered by the agent", agent_answered)

        async def run_command_exit3() -> None:
            marker = unique("py")
            before = len(elicitations)
            res = await elicit.call_tool("run_command", {"argv": ["sh", "-c", f"echo hi {marker}; exit 3"]})
            task_id = (sc(res).get("task") or {}).get("taskId")
            r.check("run_command: tools/call answers at once with the task handle", isinstance(task_id, str), res)
            if not task_id:
                return

            async def approve() -> dict:
                await asyncio.sleep(1.0)
                await human.wait_for_request("approve-command", task_id=task_id)
                return await human.answer(task_id, "approve-command", {"action": "accept", "content": {}})

            approving = asyncio.create_task(approve())
            seen: list = []
            final = await poll_until_terminal(elicit, task_id, seen)
            try:
                approved = await approving
            except Exception as e:  # noqa: BLE001
                approved = e
            waiting = [s for s in seen if s["status"] not in TERMINAL]
            r.check("run_command: the human approves it through /v1 (key approve-command)", isinstance(approved, dict) and "approve-command" in approved.get("accepted", []), approved)
            r.check("run_command: the agent (which declared elicitation) reads working while the human decides, never input_required or the human-only request", waiting and all(s["status"] == "working" and not s["inputRequests"] for s in waiting), seen)
            r.check("run_command: the agent's elicitation handler is never asked for the human-only approval", isinstance(approved, dict) and len(elicitations) == before, [p.message for p in elicitations[before:]])
            result = final.get("result") or {}
            r.check("run_command: task_status returns the completed result, isError true, structuredContent.exitCode 3", final.get("status") == "completed" and result.get("isError") is True and (result.get("structuredContent") or {}).get("exitCode") == 3, final)

        await r.scenario("run_command approved by the human, exits 3", run_command_exit3)

        async def cancel() -> None:
            message = unique("python-mcp: nobody answers this")
            res = await plain.call_tool("request_approval", {"message": message})
            task_id = (sc(res).get("task") or {}).get("taskId")
            r.check("cancel: tools/call answers with the task handle", isinstance(task_id, str), res)
            if not task_id:
                return
            await asyncio.sleep(0.3)
            resp = await plain.call_tool("task_cancel", {"taskId": task_id})
            r.check("cancel: task_cancel is accepted", not resp.is_error, resp)
            seen: list = []
            final = await poll_until_terminal(plain, task_id, seen, timeout=8)
            r.check("cancel: task_status then reads cancelled", final.get("status") == "cancelled", seen)

        await r.scenario("cancel through task_cancel", cancel)

        async def failing() -> None:
            res = await plain.call_tool("run_command", {"argv": ["true"], "cwd": MISSING_CWD})
            task_id = (sc(res).get("task") or {}).get("taskId")
            if task_id:
                seen: list = []
                final = await poll_until_terminal(plain, task_id, seen, timeout=8)
                result = final.get("result") or {}
                text = text_of(result) + " " + str(final.get("error") or "") + " " + str(final.get("statusMessage") or "")
                ok = (final.get("status") == "completed" and result.get("isError") is True) or final.get("status") == "failed"
                observed = final
            else:
                text, ok, observed = text_of(res), res.is_error is True, res
            r.check("missing cwd: the agent gets the real error naming the directory", ok and MISSING_CWD in text, observed)
            if task_id:
                d = await human.detail(task_id)
                r.check("missing cwd: it fails at once, without asking the human", not d.get("inputRounds"), d.get("inputRounds"))

        await r.scenario("failing tool: run_command in a cwd that does not exist", failing)

        async def gateway_read_and_write() -> None:
            path = fresh_file("py-read")
            text = unique("read by python-mcp")
            with open(path, "w") as f:
                f.write(text)
            res = await plain.call_tool("fs__read_text_file", {"path": path})
            r.check("gateway read: fs__read_text_file answers at once with the file text (no handle)", not res.is_error and text in text_of(res) and "task" not in sc(res), res)
            path = fresh_file("py-write")
            content = unique("written by python-mcp")
            res = await plain.call_tool("fs__write_file", {"path": path, "content": content})
            task_id = (sc(res).get("task") or {}).get("taskId")
            r.check("gateway write: fs__write_file answers at once with the task handle (it waits for the human)", isinstance(task_id, str) and not res.is_error, res)
            if not task_id:
                return
            asked = await human.approve_call(task_id)
            message = ((asked.get("inputRequests") or {}).get("approve") or {}).get("params", {}).get("message", "")
            r.check("gateway write: the human's question names the server, tool and the path", "write_file" in message and " fs " in message and path in message, message)
            seen: list = []
            final = await poll_until_terminal(plain, task_id, seen)
            result = final.get("result") or {}
            r.check("gateway write: task_status then shows the upstream's result (completed, not isError)", final.get("status") == "completed" and result.get("isError") is not True and "success" in text_of(result).lower(), final)
            r.check("gateway write: the file exists with the content", os.path.exists(path) and open(path).read() == content, path)

        await r.scenario("gateway: fs__read_text_file and fs__write_file", gateway_read_and_write)

        try:
            await stack.aclose()
        except BaseException as e:  # noqa: BLE001
            r.check("closing the 2026-07-28 clients raises nothing", False, e)

    async def legacy() -> None:
        sdk_warnings.records.clear()
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {AGENT_TOKEN}"}) as http:
            async with Client(streamable_http_client(MCP_URL, http_client=http), mode="legacy", client_info=types.Implementation(name="python-mcp-legacy", version="1.0.0"), read_timeout_seconds=15) as legacy_client:
                r.check("legacy mode: initialize negotiates 2025-11-25", legacy_client.protocol_version == "2025-11-25", legacy_client.protocol_version)
                started = time.monotonic()
                res = await legacy_client.call_tool("request_approval", {"message": unique("python-mcp legacy: plain call")})
                r.check("legacy mode: a plain tools/call answers at once with the task handle in structuredContent.task", isinstance((sc(res).get("task") or {}).get("taskId"), str) and time.monotonic() - started < 5, res)
        r.check("legacy mode: closing the session (DELETE) is answered 200 or 204, no SDK warning", not sdk_warnings.records, sdk_warnings.records)

    await r.scenario("legacy (2025-11-25) session", legacy)
    await human.cancel_leftovers()


asyncio.run(main())
r.finish()
