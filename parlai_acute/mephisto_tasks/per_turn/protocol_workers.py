"""SIMULATED per-turn workers without a browser: speak the page's protocol over HTTP + websocket.

For load benchmarks (20 Chromium pages do not fit on 2 cores) and for tests of what the
server enforces whatever a client sends. Each client does what ``per_turn.js`` does:
POST ``/request_agent``, open the router websocket and say hello (this client's tab claims the
assignment), send actions with unique ids and wait for the view that acknowledges each, then
POST ``/submit_task``. Like a shown page (``mephisto_live.js``) it sends a heartbeat before each
packet and, until it submits, a heartbeat every 3 s and an ownership ping at a random moment in each
(``browser.keep_pinging``, shared with the ACUTE-Eval client). Names get the ``simulated-`` prefix. Also used by the task tests of the
other item tasks (SSA labelling, multi-reference): the protocol is the same.
"""
from __future__ import annotations

import asyncio
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Callable

from parlai_acute.mephisto_tasks.live.browser import keep_pinging, post_json, simulated_name, stop_pinging
from parlai_acute.mephisto_tasks.per_turn.simulated_workers import Choice

#: how long a client told to register again keeps trying (the page's GIVE_UP_MS, mephisto_live.js)
GIVE_UP_S = 90.0


@dataclass
class ProtocolRun:
    worker: str
    turns: list[dict] = field(default_factory=list)  # {"turn", "wait": message sent -> candidates shown, seconds}
    refused: list[str] = field(default_factory=list)  # errors the server answered with
    status: str = ""
    unavailable: str = ""
    tab: str = ""  # the tab id this client claimed the assignment with
    agent_id: str = ""  # the Mephisto agent it worked through
    submitted: bool = False  # /submit_task posted



class Client:
    """One worker's connection: :meth:`send` a packet and get the view that answers it. ``tab``: the
    page's tab id (another client's: the same page registering again, e.g. after a relaunch); ``ping``:
    send the heartbeats and ownership pings of a shown page while open (see :func:`keep_pinging`)."""

    def __init__(self, base_url: str, worker: str, assignment: str, *, tab: str | None = None, ping: bool = True):
        self.base = base_url.rstrip("/")
        self.name = simulated_name(worker)
        self.assignment = assignment
        self.seq = 0
        self.tab = tab or uuid.uuid4().hex
        self.ping = ping
        self.pings = 0  # ownership pings sent
        self.owner: dict | None = None  # the server's last answer to a ping ({"type": "owner", "tab", "version"})
        self._pinger = None
        self.view: dict = {}
        self.seen: list[dict] = []  # every view the server sent, the waits' ones included
        self.agent_id = None
        self.sock = None

    async def open(self) -> str:
        """Register; returns "" or the reason there is no unit for this worker."""
        import websockets

        registration = {"worker_name": self.name, "agent_registration_id": f"{self.assignment}-{self.name}",
                        "assignment_id": self.assignment, "provider_type": "mock"}
        again_at = None
        while True:
            details = await post_json(f"{self.base}/request_agent",
                                      {"provider_data": registration, "client_timestamp": time.time()})
            data = details.get("data") or {}
            if not data.get("agent_id"):
                if again_at is not None and time.monotonic() - again_at < GIVE_UP_S:
                    # as the page: once told to register again, it keeps trying (the agent holding the work
                    # may still be starting: Mephisto knows it only when its first view is made)
                    await asyncio.sleep(2)
                    continue
                return data.get("failure_reason") or "no agent"
            if not (data.get("init_task_data") or {}).get("again"):
                break
            again_at = again_at if again_at is not None else time.monotonic()
            await asyncio.sleep(1)  # another page of this assignment registered at the same instant: again
        self.agent_id, self.view = data["agent_id"], data["init_task_data"]
        url = self.base.replace("http://", "ws://").replace("https://", "wss://") + "/"
        self.sock = await websockets.connect(url, max_size=None, ping_interval=None)
        await self._send("alive", {})
        await self._send("heartbeat", {})
        await self._send("mephisto_bound_live_update", {"type": "hello", "tab": self.tab, "claim": True})
        if self.ping:
            self._pinger = asyncio.ensure_future(keep_pinging(self._send, self.tab, self._pinged))
        return ""

    def _pinged(self) -> None:
        self.pings += 1

    async def _send(self, kind: str, payload: dict) -> None:
        """One packet; a live update goes right after a heartbeat, as the page sends it (the router
        answers the socket that sent the last heartbeat)."""
        if kind == "mephisto_bound_live_update":
            await self.sock.send(self._packet("heartbeat", {}))
        await self.sock.send(self._packet(kind, payload))

    def _packet(self, kind: str, payload: dict) -> str:
        return json.dumps({"packet_type": kind, "subject_id": self.agent_id, "data": payload,
                           "client_timestamp": time.time()})

    async def send(self, payload: dict, timeout: float = 120.0, action_id: str | None = None) -> dict:
        """Send one action (``action_id``: resend an earlier one); return the first non-waiting view
        that acknowledges it."""
        if action_id is None:
            self.seq += 1
            action_id = f"{self.tab}:{self.seq}"
        payload = dict(payload, action_id=action_id, tab=self.tab)
        self.last_action = action_id
        await self._send("mephisto_bound_live_update", payload)
        while True:
            msg = json.loads(await asyncio.wait_for(self.sock.recv(), timeout))
            view = msg.get("data") or {}
            if msg.get("packet_type") == "client_bound_live_update" and view.get("type") == "owner":
                self.owner = view
                continue
            if msg.get("packet_type") != "client_bound_live_update" or view.get("type") != "state":
                continue
            if view.get("version", 0) <= self.view.get("version", -1):
                continue
            self.view = view
            self.seen.append(view)
            if view.get("ack") == action_id and not view.get("waiting"):
                return view

    async def submit(self) -> None:
        await stop_pinging(self._pinger)  # a submitted page pings no more
        self._pinger = None
        await post_json(f"{self.base}/submit_task", {
            "USED_AGENT_ID": self.agent_id, "final_data": {"status": self.view.get("status")},
            "client_timestamp": time.time()})

    async def close(self) -> None:
        await stop_pinging(self._pinger)
        self._pinger = None
        if self.sock is not None:
            await self.sock.close()


def _wire(choice: Choice, view: dict) -> dict:
    return {"type": "choice" if view["status"] == "chatting" else "onboarding", "turn": view.get("turn"),
            "picked": list(choice.picked), "none": choice.none, "user_reply": choice.user_reply,
            "justification": choice.justification,
            **({"sensible": choice.sensible, "specific": bool(choice.specific)} if choice.sensible is not None else {})}


async def run_protocol_worker(base_url: str, worker: str, assignment: str, write: Callable[[dict], str],
                              choose: Callable[[dict], Choice], *, turns: int,
                              clock: Callable[[], float] = time.perf_counter, submit: bool = True) -> ProtocolRun:
    """One dialogue of ``turns`` judged turns, then finish; ``wait`` per turn is message -> candidates.
    ``submit=False``: stop once the dialogue is over, before the page's submit (as a page whose server
    stopped in between)."""
    client = Client(base_url, worker, assignment)
    run = ProtocolRun(worker=client.name, tab=client.tab)
    run.unavailable = await client.open()
    if run.unavailable:
        return run
    run.agent_id = str(client.agent_id)
    try:
        view = client.view
        if view["status"] == "onboarding":
            view = await client.send(_wire(choose(view), view))
        while view["status"] == "chatting" and view["turns_done"] < turns:
            started = clock()
            view = await client.send({"type": "message", "text": write(view)})
            if view.get("error"):
                run.refused.append(view["error"])
                break
            run.turns.append({"turn": view["turn"], "wait": clock() - started, "shown": len(view["candidates"] or [])})
            view = await client.send(_wire(choose(view), view))
            if view.get("error"):
                run.refused.append(view["error"])
                break
        if view["status"] == "chatting":
            view = await client.send({"type": "finish"})
            if view.get("error"):
                run.refused.append(view["error"])
        run.status = view["status"]
        if submit and view["status"] in ("complete", "blocked", "unavailable"):
            await client.submit()
            run.submitted = True
    finally:
        await client.close()
    return run


def run_sync(coroutine_factory):
    """Run an async client function from synchronous code (also next to Playwright's loop)."""
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine_factory()).result()
