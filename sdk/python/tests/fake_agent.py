"""A scripted agent on a real unix socket: checks each request line, answers the scripted reply."""

from __future__ import annotations

import json
import socket
import threading
from typing import Any


def canonical(value: Any) -> str:
    """JSON text that compares values as JSON does: 1 is not true, key order does not matter."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


class FakeAgent:
    """Serves one scripted conversation; any further request, on this or a new connection, is an error."""

    def __init__(self, path: str, exchanges: list[dict[str, Any]]) -> None:
        self.exchanges = exchanges
        self.errors: list[str] = []
        self.requests: list[Any] = []
        self._stop = threading.Event()
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(path)
        self._listener.listen(8)
        self._listener.settimeout(0.05)
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        first = True
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except socket.timeout:
                continue
            with conn:
                conn.settimeout(10)
                if first:
                    first = False
                    self._converse(conn)
                else:
                    self._refuse(conn, "a new connection")

    def _converse(self, conn: socket.socket) -> None:
        reader = conn.makefile("rb")
        for index, exchange in enumerate(self.exchanges):
            line = reader.readline()
            if not line:
                self.errors.append(f"exchange {index}: the SDK closed without sending {exchange['request']}")
                return
            request = json.loads(line)
            self.requests.append(request)
            if canonical(request) != canonical(exchange["request"]):
                self.errors.append(f"exchange {index}: sent {canonical(request)}, expected {canonical(exchange['request'])}")
                return
            if exchange["reply"] is None:
                return
            conn.sendall((json.dumps(exchange["reply"]) + "\n").encode())
        self._refuse(conn, "the same connection", reader.readline())

    def _refuse(self, conn: socket.socket, where: str, line: bytes | None = None) -> None:
        if line is None:
            try:
                line = conn.makefile("rb").readline()
            except OSError:
                line = b""
        if line:
            self.errors.append(f"the SDK sent more than the vector on {where}: {line.decode().strip()}")

    def finish(self) -> list[str]:
        """Stops serving (after the SDK closed its connection) and returns what went wrong."""
        self._stop.set()
        self._thread.join(15)
        self._listener.close()
        return self.errors
