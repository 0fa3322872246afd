"""FastMCP's client (`fastmcp`) with `fastmcp-tasks` (versions pinned in run.sh): importing
fastmcp_tasks registers TasksClientExtension on every fastmcp.Client, so the client declares the
io.modelcontextprotocol/tasks extension (2026-07-28, mode "auto"), claims a CreateTaskResult
(resultType "task") and drives it with tasks/get, answers inputRequests through the Client's
elicitation_handler with tasks/update, and cancels with tasks/cancel
(site-packages/fastmcp_tasks/client.py). Two surfaces are used: the transparent
client.call_tool (polls to the end) and the explicit handle call_tool_task -> ToolTask
(status / result / cancel).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import fastmcp_tasks  # noqa: F401 - registers the tasks client extension on every Client
import mcp_types as types
from fastmcp import Client
from fastmcp.client.elicitation import ElicitResult
from fastmcp.client.transports import StreamableHttpTransport
from fastmcp.exceptions import ToolError
from fastmcp_tasks import call_tool_task

from lib.common import (
    AGENT_NAME,
    AGENT_TOKEN,
    MCP_URL,
    MISSING_CWD,
    NOTE_SCHEMA,
    TERMINAL,
    Reporter,
    find_task,
    human,
    record,
    text_of,
    unique,
)

r = Reporter("fastmcp")
agent_answers: dict[str, dict[str, Any]] = {}  # elicitation message -> content the agent accepts with
elicitations: list[str] = []


async def elicitation_handler(message: str, response_type: Any, params: Any, context: Any) -> ElicitResult:
    """The agent's own elicitation handler: accepts what the test registered for that message."""
    elicitations.append(message)
    content = agent_answers.get(message)
    if content is None:
        return ElicitResult(action="decline")
    return ElicitResult(action="accept", content=content)


def transport() -> StreamableHttpTransport:
    return StreamableHttpTransport(MCP_URL, auth=AGENT_TOKEN)


async def poll(task: Any, seen: list, timeout: float = 12) -> Any:
    """Polls ToolTask.status() (tasks/get) until the task is terminal."""
    deadline = time.monotonic() + timeout
    while True:
        st = await task.status()
        record(seen, {"status": st.status, "statusMessage": st.status_message, "inputRequests": list((st.input_requests or {}).keys())})
        if st.status in TERMINAL or time.monotonic() > deadline:
            return st
        await asyncio.sleep(0.15)


async def main() -> None:
    plain = Client(transport(), timeout=20)
    elicit = Client(transport(), elicitation_handler=elicitation_handler, timeout=20)
    try:
        await plain.__aenter__()
    except BaseException as e:  # noqa: BLE001
        r.check("connect (mode auto)", False, e)
        r.finish()
    try:
        await elicit.__aenter__()
    except BaseException as e:  # noqa: BLE001
        r.check("connect (mode auto, with an elicitation handler)", False, e)
        r.finish()
    r.check("mode auto negotiates the 2026-07-28 era (server/discover)", plain.protocol_version == "2026-07-28", plain.protocol_version)

    async def human_answered_handle() -> None:
        message = unique("fastmcp: may I deploy?")
        note = unique("from-the-human")
        task = await call_tool_task(plain, "request_approval", {"message": message, "requestedSchema": NOTE_SCHEMA})
        r.check("human-answered approval (ToolTask): tools/call answers a CreateTaskResult (resultType task)", isinstance(task.task_id, str), task.create_result)

        async def answer() -> dict:
            await asyncio.sleep(1.0)
            await human.wait_for_request("approval", task_id=task.task_id)
            return await human.answer(task.task_id, "approval", {"action": "accept", "content": {"note": note}})

        answering = asyncio.create_task(answer())
        seen: list = []
        await poll(task, seen)
        try:
            answered = await answering
        except Exception as e:  # noqa: BLE001
            answered = e
        waiting = [s for s in seen if s["status"] not in TERMINAL]
        r.check("human-answered approval (ToolTask): the human answers it through POST /v1/tasks/{id}/input", isinstance(answered, dict) and "approval" in answered.get("accepted", []), answered)
        r.check("human-answered approval (ToolTask): tasks/get reads working (no elicitation handler), never input_required", waiting and all(s["status"] == "working" for s in waiting), seen)
        r.check("human-answered approval (ToolTask): a working statusMessage says it waits for a human", any(s["status"] == "working" and "human" in (s["statusMessage"] or "").lower() for s in seen), seen)
        try:
            res = await task.result()
        except BaseException as e:  # noqa: BLE001
            res = e
        out = getattr(res, "structured_content", None) or {}
        r.check("human-answered approval (ToolTask): result() is the human's answer (action accept, content.note)", out.get("action") == "accept" and (out.get("content") or {}).get("note") == note, res)

    await r.scenario("request_approval answered by the human (call_tool_task handle)", human_answered_handle)

    async def human_answered_transparent() -> None:
        message = unique("fastmcp: transparent call?")
        note = unique("from-the-human")

        async def answer() -> dict:
            t = await human.wait_for_request("approval", match=lambda t: (t.get("arguments") or {}).get("message") == message)
            await asyncio.sleep(0.8)
            return await human.answer(t["taskId"], "approval", {"action": "accept", "content": {"note": note}})

        answering = asyncio.create_task(answer())
        try:
            res = await plain.call_tool("request_approval", {"message": message, "requestedSchema": NOTE_SCHEMA})
        except BaseException as e:  # noqa: BLE001
            res = e
        try:
            answered = await asyncio.wait_for(answering, 10)
        except BaseException as e:  # noqa: BLE001
            answered = e
        out = getattr(res, "structured_content", None) or {}
        r.check("human-answered approval (transparent call_tool, no elicitation handler): returns the human's answer, no ToolError", out.get("action") == "accept" and (out.get("content") or {}).get("note") == note, {"result": res, "human": answered})

    await r.scenario("request_approval answered by the human (transparent call_tool)", human_answered_transparent)

    async def agent_answered() -> None:
        message = unique("fastmcp: agent, confirm?")
        note = unique("from-the-agent")
        agent_answers[message] = {"note": note}
        before = len(elicitations)
        try:
            res = await elicit.call_tool("request_approval", {"message": message, "requestedSchema": NOTE_SCHEMA})
        except BaseException as e:  # noqa: BLE001
            res = e
        asked = [m for m in elicitations[before:] if m == message]
        r.check("agent-answered approval: the elicitation handler is asked once (inputRequests answered with tasks/update)", len(asked) == 1, elicitations[before:])
        out = getattr(res, "structured_content", None) or {}
        r.check("agent-answered approval: call_tool returns the agent's answer (action accept, content.note)", out.get("action") == "accept" and (out.get("content") or {}).get("note") == note, res)
        t = await find_task("request_approval", lambda t: (t.get("arguments") or {}).get("message") == message)
        d = await human.detail(t["taskId"])
        rnd = next((x for x in d.get("inputRounds") or [] if x.get("key") == "approval"), None)
        r.check("agent-answered approval: Taskdeck records the agent as the one who answered", rnd and rnd.get("answeredBy") == AGENT_NAME, rnd)

    await r.scenario("request_approval answered by the agent", agent_answered)

    async def run_command_exit3() -> None:
        marker = unique("fm")
        before = len(elicitations)
        task = await call_tool_task(elicit, "run_command", {"argv": ["sh", "-c", f"echo hi {marker}; exit 3"]}, raise_on_error=False)

        async def approve() -> dict:
            await asyncio.sleep(1.0)
            await human.wait_for_request("approve-command", task_id=task.task_id)
            return await human.answer(task.task_id, "approve-command", {"action": "accept", "content": {}})

        approving = asyncio.create_task(approve())
        seen: list = []
        await poll(task, seen)
        try:
            approved = await approving
        except Exception as e:  # noqa: BLE001
            approved = e
        waiting = [s for s in seen if s["status"] not in TERMINAL]
        r.check("run_command: the human approves it through /v1 (key approve-command)", isinstance(approved, dict) and "approve-command" in approved.get("accepted", []), approved)
        r.check("run_command: the agent (which has an elicitation handler) reads working while the human decides, never input_required", waiting and all(s["status"] == "working" and not s["inputRequests"] for s in waiting), seen)
        r.check("run_command: the elicitation handler is never asked for the human-only approval", isinstance(approved, dict) and len(elicitations) == before, elicitations[before:])
        try:
            res = await task.result()
        except BaseException as e:  # noqa: BLE001
            res = e
        r.check("run_command: result() is the tool error: is_error, structured_content.exitCode 3", getattr(res, "is_error", None) is True and (getattr(res, "structured_content", None) or {}).get("exitCode") == 3, res)

    await r.scenario("run_command approved by the human, exits 3", run_command_exit3)

    async def cancel() -> None:
        marker = unique("fm-sleep")
        task = await call_tool_task(plain, "run_command", {"argv": ["sh", "-c", f"sleep 30 # {marker}"]}, raise_on_error=False)
        await human.wait_for_request("approve-command", task_id=task.task_id)
        await human.answer(task.task_id, "approve-command", {"action": "accept", "content": {}})
        await human.wait_for_status(task.task_id, ("working",))
        await asyncio.sleep(0.3)
        t0 = time.monotonic()
        try:
            await task.cancel()
            acked: Any = "acknowledged"
        except BaseException as e:  # noqa: BLE001
            acked = e
        r.check("cancel: ToolTask.cancel() (tasks/cancel) is acknowledged", acked == "acknowledged", acked)
        seen: list = []
        st = await poll(task, seen, timeout=10)
        r.check("cancel: tasks/get then reads cancelled (the sleep was stopped)", st.status == "cancelled", seen)
        r.check("cancel: it ends within 6 s of the cancel", time.monotonic() - t0 < 6, f"{time.monotonic() - t0:.1f} s")

    await r.scenario("cancel through tasks/cancel (a running sleep 30)", cancel)

    async def failing() -> None:
        try:
            res = await plain.call_tool("run_command", {"argv": ["true"], "cwd": MISSING_CWD}, raise_on_error=False)
            text, ok = text_of(res), res.is_error is True
        except ToolError as e:
            res, text, ok = e, str(e), True
        except BaseException as e:  # noqa: BLE001
            res, text, ok = e, "", False
        r.check("missing cwd: the agent gets the real error naming the directory", ok and MISSING_CWD in text, res)

    await r.scenario("failing tool: run_command in a cwd that does not exist", failing)

    for c in (elicit, plain):
        try:
            await c.__aexit__(None, None, None)
        except BaseException as e:  # noqa: BLE001
            r.check("closing the client raises nothing", False, e)
    await human.cancel_leftovers()


asyncio.run(main())
r.finish()
