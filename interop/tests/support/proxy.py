"""A fault-injecting TCP proxy on 127.0.0.1, switched at run time by the test.

One ``FaultProxy`` listens on a free port and forwards every connection to ``127.0.0.1:target``.
Its mode can be changed while connections are open:

* ``PASS``      - bytes flow both ways, half-closes are passed on.
* ``PARTITION`` - every open connection is reset (RST on both sides) and every new one is
                  accepted and reset at once: the peer sees "connection reset", as across a
                  broken link or a firewall that rejects.
* ``BLACKHOLE`` - new connections are accepted and never answered; open connections stop
                  forwarding. What arrives is read and thrown away (so nothing piles up), nothing
                  is ever sent back: the peer waits until its own timeout, as with a hung server
                  or a firewall that drops packets.

Leaving ``BLACKHOLE`` resets the connections it was holding (their byte streams lost data, so they
cannot be resumed). The number of connections is bounded (``max_connections``; beyond it new
ones are reset) and reads are done in bounded chunks with back-pressure, so a proxy's memory
stays small whatever the peers do. Each proxy runs its own asyncio loop on a daemon thread;
``close()`` stops it and closes every socket.
"""
from __future__ import annotations

import asyncio
import socket
import struct
import threading
from dataclasses import dataclass, field
from typing import Optional

HOST = "127.0.0.1"

PASS = "pass"
PARTITION = "partition"
BLACKHOLE = "blackhole"
MODES = (PASS, PARTITION, BLACKHOLE)

CHUNK = 64 * 1024


def _reset(writer: Optional[asyncio.StreamWriter]) -> None:
    """Close with RST (SO_LINGER 0), not FIN: the other side sees 'connection reset'."""
    if writer is None:
        return
    sock = writer.get_extra_info("socket")
    try:
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    writer.transport.abort()


@dataclass(eq=False)
class _Conn:
    client: asyncio.StreamWriter
    upstream: Optional[asyncio.StreamWriter] = None
    blackholed: bool = False
    tasks: list = field(default_factory=list)

    def reset(self) -> None:
        for t in self.tasks:
            t.cancel()
        _reset(self.client)
        _reset(self.upstream)


@dataclass
class ProxyStats:
    accepted: int = 0
    forwarded: int = 0      # connections opened to the target
    reset: int = 0          # connections reset by the proxy (partition, overflow, leaving black hole)
    blackholed: int = 0     # connections accepted in black-hole mode


class FaultProxy:
    def __init__(self, target_port: int, name: str = "", max_connections: int = 256):
        self.target_port = target_port
        self.name = name or f"proxy->{target_port}"
        self.max_connections = max_connections
        self.port: Optional[int] = None
        self.stats = ProxyStats()
        self._mode = PASS
        self._conns: set[_Conn] = set()
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._server: Optional[asyncio.base_events.Server] = None
        self._thread: Optional[threading.Thread] = None

    def __repr__(self) -> str:
        return f"<FaultProxy {self.name} :{self.port} -> :{self.target_port} {self._mode}>"

    # -- lifecycle (called from the test thread) ------------------------------------------
    def start(self) -> "FaultProxy":
        assert self._thread is None, "already started"
        self._loop = asyncio.new_event_loop()
        ready = threading.Event()
        failure: list[BaseException] = []

        def run():
            asyncio.set_event_loop(self._loop)
            try:
                self._server = self._loop.run_until_complete(
                    asyncio.start_server(self._accept, HOST, 0, limit=CHUNK))
                self.port = self._server.sockets[0].getsockname()[1]
            except BaseException as exc:  # noqa: BLE001 - reported to start()
                failure.append(exc)
                ready.set()
                return
            ready.set()
            self._loop.run_forever()
            self._loop.close()

        self._thread = threading.Thread(target=run, name=self.name, daemon=True)
        self._thread.start()
        if not ready.wait(10) or failure:
            raise RuntimeError(f"{self.name} did not start: {failure}")
        return self

    def close(self) -> None:
        if self._loop is None or self._thread is None:
            return
        if self._loop.is_running():
            try:
                self._call(self._shutdown())
            finally:
                self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._thread = None

    @property
    def mode(self) -> str:
        return self._mode

    def set_mode(self, mode: str) -> None:
        assert mode in MODES, mode
        self._call(self._switch(mode))

    def pass_through(self) -> None:
        self.set_mode(PASS)

    def partition(self) -> None:
        self.set_mode(PARTITION)

    def black_hole(self) -> None:
        self.set_mode(BLACKHOLE)

    def open_connections(self) -> int:
        return len(self._conns)

    def _call(self, coro, timeout: float = 10.0):
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    # -- the loop's side ----------------------------------------------------------------------
    async def _switch(self, mode: str) -> None:
        old, self._mode = self._mode, mode
        if mode == PARTITION or (old == BLACKHOLE and mode == PASS):
            for c in list(self._conns):
                if mode == PARTITION or c.blackholed:
                    self._drop(c)
        elif mode == BLACKHOLE:
            for c in self._conns:
                c.blackholed = True

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        for c in list(self._conns):
            self._drop(c)            # cancels its pumps and aborts its sockets
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        if others:
            _, stuck = await asyncio.wait(others, timeout=2)
            for t in stuck:
                t.cancel()

    def _drop(self, conn: _Conn) -> None:
        self.stats.reset += 1
        self._conns.discard(conn)
        conn.reset()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.stats.accepted += 1
        conn = _Conn(writer)
        if self._mode == PARTITION or len(self._conns) >= self.max_connections:
            self.stats.reset += 1
            _reset(writer)
            return
        self._conns.add(conn)
        if self._mode == BLACKHOLE:
            self.stats.blackholed += 1
            conn.blackholed = True
            await self._swallow(conn, reader)
            return
        try:
            up_reader, up_writer = await asyncio.wait_for(
                asyncio.open_connection(HOST, self.target_port, limit=CHUNK), 5)
        except (OSError, asyncio.TimeoutError):
            # the target is down: the peer should see what it would see without the proxy
            self._drop(conn)
            return
        if conn not in self._conns:          # partitioned while connecting
            _reset(up_writer)
            return
        self.stats.forwarded += 1
        conn.upstream = up_writer
        if conn.blackholed:                  # black-holed while connecting
            _reset(up_writer)
            conn.upstream = None
            await self._swallow(conn, reader)
            return
        conn.tasks = [asyncio.ensure_future(self._pump(conn, reader, up_writer)),
                      asyncio.ensure_future(self._pump(conn, up_reader, writer))]
        await asyncio.gather(*conn.tasks, return_exceptions=True)
        if conn in self._conns:
            self._conns.discard(conn)
            for w in (writer, up_writer):
                w.close()

    async def _pump(self, conn: _Conn, src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        try:
            while True:
                data = await src.read(CHUNK)
                if not data:
                    break
                if conn.blackholed:
                    continue                 # read and drop: never answer, never buffer
                dst.write(data)
                await dst.drain()
            if not conn.blackholed and dst.can_write_eof():
                dst.write_eof()              # pass the half-close on (HTTP/1.0 style bodies)
        except (OSError, asyncio.IncompleteReadError):
            pass
        if conn.blackholed:
            # the source closed its side while held: keep holding the other one open
            await asyncio.Event().wait()

    async def _swallow(self, conn: _Conn, reader: asyncio.StreamReader) -> None:
        try:
            while conn in self._conns and await reader.read(CHUNK):
                pass
        except OSError:
            pass
        if conn in self._conns:
            self._conns.discard(conn)
            conn.client.close()
