"""Waiting for a condition, in plain code and in asyncio code."""
import asyncio
import time


def wait_for(condition, timeout, interval=0.25):
    """Calls `condition()` every `interval` seconds and returns its first true value; after
    `timeout` seconds, what one last call returns."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    return condition()


async def wait_for_async(condition, timeout, interval=0.5):
    """Awaits `condition()` every `interval` seconds and returns its first true value; None after
    `timeout` seconds."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = await condition()
        if value:
            return value
        await asyncio.sleep(interval)
    return None
