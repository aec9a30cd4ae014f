"""The router copy we serve from delivers each packet once (Mephisto 1.1.1's sent everything twice)."""
import asyncio
import json
import os
import subprocess
import time
import urllib.request

from acute_task_helpers import free_port

from parlai_acute.mephisto_tasks.live import setup


async def deliveries(port: int) -> list[dict]:
    import websockets

    url = f"ws://127.0.0.1:{port}/"
    async with websockets.connect(url) as system, websockets.connect(url) as agent:
        await system.send(json.dumps({"packet_type": "alive", "subject_id": "mephisto", "data": {}}))
        await agent.send(json.dumps({"packet_type": "alive", "subject_id": "agent-1", "data": {}}))
        await asyncio.sleep(0.3)
        await system.send(json.dumps({"packet_type": "client_bound_live_update", "subject_id": "agent-1",
                                      "data": {"n": 1}}))
        got = []
        end = time.monotonic() + 2.0  # the old resend came 500 ms later
        while time.monotonic() < end:
            try:
                msg = json.loads(await asyncio.wait_for(agent.recv(), end - time.monotonic()))
            except asyncio.TimeoutError:
                break
            if msg["packet_type"] == "client_bound_live_update":
                got.append(msg["data"])
        return got


def test_router_copy_sends_each_packet_once():
    source = setup.router_source()
    port = free_port()
    proc = subprocess.Popen(["node", "server.js"], cwd=source, env=dict(os.environ, PORT=str(port)),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/is_alive", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        assert asyncio.run(deliveries(port)) == [{"n": 1}]
    finally:
        proc.terminate()
        proc.wait(timeout=10)
