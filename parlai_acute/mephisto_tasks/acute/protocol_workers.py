"""SIMULATED workers without a browser: speak the page's protocol over HTTP + websocket.

For load tests (50 chromium pages do not fit on 2 cores). Each client does what ``acute.js``
does: POST ``/request_agent``, open the router websocket, send ``alive`` and a hello (this
client's tab claims the assignment), send one action per judgment (a unique ``action_id``) and
wait for the view that acknowledges it (ignoring the router's duplicate deliveries), then POST
``/submit_task``. Like a shown page (``mephisto_live.js``) it sends a heartbeat before each packet
and, until it submits, a heartbeat every 3 s and an ownership ping (``{"type": "ping"}``, answered
with ``{"type": "owner"}``) at a random moment in each 3 s (``browser.keep_pinging``, shared with the
per-turn client): a load test carries the packets 200 open pages send, not only their judgments. Worker names get the ``simulated-`` prefix like the browser
workers.
"""
from __future__ import annotations

import asyncio
import json
import random
import time
import uuid
from dataclasses import dataclass, field
from typing import Callable

from parlai_acute.mephisto_tasks.acute.simulated_workers import Decide
from parlai_acute.mephisto_tasks.live.browser import PREFIX, keep_pinging, post_json, stop_pinging

ROUTER_PROTOCOL = "2.0.3"


@dataclass
class ProtocolRun:
    worker: str
    made: list[dict] = field(default_factory=list)  # {"position", "choice", "reason", "rtt"}
    unavailable: str = ""  # failure reason when no unit was given
    finished: bool = False
    pings: int = 0  # ownership pings sent (see browser.keep_pinging)
    tab: str = ""  # the tab id this client claimed the assignment with
    agent_id: str = ""  # the Mephisto agent it worked through
    submitted: bool = False  # /submit_task posted



async def run_protocol_worker(base_url: str, worker: str, assignment: str, decide: Decide, *,
                              timeout: float = 60.0, clock: Callable[[], float] = time.perf_counter,
                              ping: bool = True, think: float = 0.0, submit: bool = True) -> ProtocolRun:
    """Do one unit; ``rtt`` of each judgment is send -> acknowledging view, in seconds. ``ping``: send the
    heartbeats and ownership pings a shown page sends (see :func:`..live.browser.keep_pinging`); ``think``:
    wait a random 0 to ``think`` seconds before each judgment, as a person reads (the page stays open,
    pinging); ``submit=False``: stop after the last judgment, before the page's submit (as a page whose
    server stopped in between; ``finished`` is still set)."""
    import websockets

    name = worker if worker.startswith(PREFIX) else PREFIX + worker
    run = ProtocolRun(worker=name)
    base = base_url.rstrip("/")
    registration = {"worker_name": name, "agent_registration_id": f"{assignment}-{name}",
                    "assignment_id": assignment, "provider_type": "mock"}
    details = await post_json(f"{base}/request_agent",
                              {"provider_data": registration, "client_timestamp": time.time()})
    data = details.get("data") or {}
    if not data.get("agent_id"):
        run.unavailable = data.get("failure_reason") or "no agent"
        return run
    agent_id, view = data["agent_id"], data["init_task_data"]
    run.agent_id = str(agent_id)
    ws_url = base.replace("http://", "ws://").replace("https://", "wss://") + "/"
    opened = clock()
    try:
        sock = await websockets.connect(ws_url, max_size=None, ping_interval=None)
    except (asyncio.TimeoutError, TimeoutError):
        raise TimeoutError(f"{name}: the router's websocket did not open in {clock() - opened:.1f} s") from None
    try:
        def packet(kind, payload):
            return json.dumps({"packet_type": kind, "subject_id": agent_id, "data": payload,
                               "client_timestamp": time.time()})

        async def send(kind, payload):
            await sock.send(packet(kind, payload))

        tab = run.tab = uuid.uuid4().hex
        await send("alive", {})
        await send("heartbeat", {})
        await send("mephisto_bound_live_update", {"type": "hello", "tab": tab, "claim": True})
        def pinged():
            run.pings += 1

        pinger = asyncio.ensure_future(keep_pinging(send, tab, pinged)) if ping else None
        try:
            await _judge(sock, send, run, view, decide, tab, name, timeout, clock, think)
        finally:
            await stop_pinging(pinger)
    finally:
        await sock.close()
    run.finished = True
    if submit:
        await post_json(f"{base}/submit_task", {"USED_AGENT_ID": agent_id, "final_data": {"judgments": len(run.made)},
                                                "client_timestamp": time.time()})
        run.submitted = True
    return run


async def _judge(sock, send, run: ProtocolRun, view: dict, decide: Decide, tab: str, name: str, timeout: float,
                 clock: Callable[[], float], think: float) -> None:
    """Every comparison of the unit: send the judgment (a heartbeat first, as the page does) and wait
    for the view that acknowledges it."""
    while not view["finished"]:
        position = view["comparison"]["position"]
        side, reason = decide(view)
        if think:
            await asyncio.sleep(random.uniform(0, think))
        started = clock()
        action = f"{tab}:{position}"
        await send("heartbeat", {})
        await send("mephisto_bound_live_update", {
            "type": "judgment", "position": position, "choice": side, "reason": reason,
            "action_id": action, "tab": tab})
        while True:
            try:
                msg = json.loads(await asyncio.wait_for(sock.recv(), timeout))
            except (asyncio.TimeoutError, TimeoutError):
                raise TimeoutError(f"{name}: no view acknowledged judgment {position} in {timeout:g} s") from None
            reply = msg.get("data") or {}
            if (msg.get("packet_type") == "client_bound_live_update" and reply.get("type") == "state"
                    and reply.get("ack") == action):
                if reply.get("error"):
                    raise AssertionError(f"{name}: judgment refused: {reply['error']}")
                break
        run.made.append({"position": position, "choice": side, "reason": reason, "rtt": clock() - started})
        view = reply


def run_protocol_workers_sync(base_url: str, workers: list[tuple[str, str]], decide: Decide,
                              **kwargs) -> list:
    """Run ``(worker, assignment)`` clients concurrently from synchronous code; exceptions are returned.

    Uses its own thread, so it also works where an event loop is already running (e.g. next
    to Playwright's sync API).
    """
    import concurrent.futures

    async def all_workers():
        return await asyncio.gather(*[run_protocol_worker(base_url, w, a, decide, **kwargs) for w, a in workers],
                                    return_exceptions=True)

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, all_workers()).result()
