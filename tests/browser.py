"""Headless Chromium driven over the DevTools protocol, for tests and benchmarks of the static HTML.

`--dump-dom` shows a page after load but cannot click; this opens a page in a real browser,
waits for its load event, evaluates JavaScript in it (set a filter, click a header) and reads
the Navigation Timing figures. The websocket client is aiohttp's (already a dependency of DVC).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import shutil
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--hide-scrollbars",
    "--remote-debugging-port=0",
)


class Page:
    """One browser tab: `send` a DevTools command, `evaluate` an expression, `open` a URL."""

    def __init__(self, ws):
        self.ws, self.last_id, self.events = ws, 0, []

    async def send(self, method: str, **params: Any) -> dict:
        self.last_id += 1
        ident = self.last_id
        await self.ws.send_json({"id": ident, "method": method, "params": params})
        while True:
            message = await self.ws.receive_json()
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    async def wait_for(self, event: str, timeout: float = 60) -> dict:
        async def wait():
            while True:
                for message in self.events:
                    if message.get("method") == event:
                        self.events.remove(message)
                        return message
                self.events.append(await self.ws.receive_json())

        return await asyncio.wait_for(wait(), timeout)

    async def evaluate(self, expression: str) -> Any:
        result = await self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:80]}: {result['exceptionDetails']}")
        return result["result"].get("value")

    async def open(self, url: str) -> float:
        """Navigate and wait for the load event; returns the wall seconds it took."""
        await self.send("Page.enable")
        self.events.clear()
        start = time.perf_counter()
        await self.send("Page.navigate", url=url)
        await self.wait_for("Page.loadEventFired")
        return time.perf_counter() - start


@contextlib.asynccontextmanager
async def chromium_page(profile: Path, width: int = 1280, height: int = 1000) -> AsyncIterator[Page]:
    """A fresh headless Chromium (its own profile folder) and its first tab."""
    import aiohttp

    if CHROMIUM is None:
        raise RuntimeError("chromium is not installed (Debian package `chromium`)")
    process = await asyncio.create_subprocess_exec(
        CHROMIUM,
        *FLAGS,
        f"--user-data-dir={profile}",
        f"--window-size={width},{height}",
        "about:blank",
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        endpoint = None
        while endpoint is None:
            line = await asyncio.wait_for(process.stderr.readline(), 60)
            if not line:
                raise RuntimeError("chromium exited before it listened for DevTools")
            match = re.search(rb"DevTools listening on ws://([^/]+)/", line)
            endpoint = match.group(1).decode() if match else None
        drain = asyncio.ensure_future(process.stderr.read())  # a full pipe would stall the browser
        async with aiohttp.ClientSession() as session:
            async with session.get(f"http://{endpoint}/json/list") as answer:
                targets = await answer.json()
            url = next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page")
            async with session.ws_connect(url, max_msg_size=0) as ws:
                yield Page(ws)
    finally:
        if process.returncode is None:
            process.terminate()
            await process.wait()
        if "drain" in locals():
            await drain
