"""A workaround for a deadlock of py-eureka-client 0.13.x, imported by the interop apps using it.

py-eureka-client 0.13 serializes its requests to the service URLs with an ``asyncio.Lock`` (before
0.13 a ``threading.RLock``), and an asyncio lock is not reentrant. A request goes through that lock
when no service URL is cached (an earlier request of the heartbeat round failed) or when the cached
one has just failed it. When the registry fetch is such a request and then needs a full fetch (its
copy is empty, or the delta's ``apps__hashcode`` disagrees with it), it asks for the lock again from
inside. The heartbeat thread then waits for itself forever: no heartbeat, registration or fetch is
ever sent again, and the instance is evicted for good.

A server restart is enough to get there: the server is down for the round's registration (or is
killed under the round's fetch) and up again, with a registry that changed, for the fetch's next
attempt a moment later. On a loaded machine that moment is longer, and a restart test failed now
and then because the Python instance never came back (issue 18, item 8; the app's log then ends
with the failed request, and its stop finds the lock "locked, waiters:1"). The apps here are the
tests' other clients, not the client under test, so they replace the lock with a reentrant one,
per thread as before 0.13: the heartbeat thread is the only one that sends requests while the
app runs.

``install()`` must run before ``eureka_client.init``; it fails loudly if the client no longer
holds the lock it replaces, so an upgrade makes someone look at this again.
"""
from __future__ import annotations

import asyncio
import threading

import py_eureka_client.eureka_client as ec

_ATTRIBUTE = "_EurekaClient__net_lock"    # EurekaClient.__net_lock, name-mangled


class ReentrantNetLock:
    """``async with`` over a ``threading.RLock``: reentrant in the thread that holds it."""

    def __init__(self) -> None:
        self._lock = threading.RLock()

    async def __aenter__(self) -> None:
        self._lock.acquire()

    async def __aexit__(self, *exc) -> None:
        self._lock.release()


def install() -> None:
    """Every ``EurekaClient`` made from now on gets a ``ReentrantNetLock``."""
    original = ec.EurekaClient.__init__
    if getattr(original, "reentrant_net_lock", False):
        return

    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)
        if not isinstance(getattr(self, _ATTRIBUTE, None), asyncio.Lock):
            raise RuntimeError("py-eureka-client has no asyncio.Lock EurekaClient.__net_lock any more: "
                               "check whether interop/clients/py_eureka_lock.py is still needed")
        setattr(self, _ATTRIBUTE, ReentrantNetLock())

    __init__.reentrant_net_lock = True
    ec.EurekaClient.__init__ = __init__
