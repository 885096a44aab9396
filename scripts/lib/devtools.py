"""Drive a page in a running headless Chromium over the DevTools protocol (Python stdlib only).

    python3 devtools.py USER_DATA_DIR PAGE_URL_PREFIX SCRIPT_FILE

Chromium must have been started with --remote-debugging-port=0 and --user-data-dir=USER_DATA_DIR
(it writes the port it chose to USER_DATA_DIR/DevToolsActivePort). Finds the page whose URL
starts with PAGE_URL_PREFIX, evaluates the JavaScript expression in SCRIPT_FILE (awaiting the
promise it returns) and prints the result as JSON on stdout. Exits non-zero with the reason on
stderr if anything fails: the script's own exception, a timeout, or a protocol error.

Only loopback is contacted: the DevTools endpoint of the browser this script's caller started.
"""

import base64
import json
import os
import socket
import struct
import sys
import time
import urllib.request

TIMEOUT = 60


def devtools_port(user_data_dir):
    path = os.path.join(user_data_dir, "DevToolsActivePort")
    deadline = time.time() + 20
    while time.time() < deadline:
        try:
            with open(path) as f:
                return int(f.readline().strip())
        except (OSError, ValueError):
            time.sleep(0.1)
    sys.exit(f"no DevTools port in {path}: did chromium start?")


def page_socket_url(port, prefix):
    deadline = time.time() + 20
    while time.time() < deadline:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as r:
            for target in json.load(r):
                if target.get("type") == "page" and target.get("url", "").startswith(prefix):
                    return target["webSocketDebuggerUrl"]
        time.sleep(0.2)
    sys.exit(f"no page at {prefix} in the browser")


class WebSocket:
    """The client side of RFC 6455, just what the DevTools protocol needs: text frames."""

    def __init__(self, url):
        assert url.startswith("ws://127.0.0.1:") or url.startswith("ws://localhost:"), url
        host_port, _, path = url[len("ws://"):].partition("/")
        host, _, port = host_port.partition(":")
        self.sock = socket.create_connection((host, int(port)), timeout=TIMEOUT)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (
                f"GET /{path} HTTP/1.1\r\nHost: {host_port}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                "Sec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                sys.exit("the DevTools socket closed during the handshake")
            head += chunk
        head, _, self.buffer = head.partition(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 101"):
            sys.exit(f"DevTools refused the WebSocket: {head[:200]!r}")

    def _read(self, n):
        while len(self.buffer) < n:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                sys.exit("the DevTools socket closed")
            self.buffer += chunk
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def send(self, text):
        payload = text.encode()
        header = bytes([0x81])
        n = len(payload)
        if n < 126:
            header += bytes([0x80 | n])
        elif n < 1 << 16:
            header += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(header + mask + masked)

    def receive(self):
        message = b""
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                (n,) = struct.unpack(">H", self._read(2))
            elif n == 127:
                (n,) = struct.unpack(">Q", self._read(8))
            mask = self._read(4) if b1 & 0x80 else None
            data = self._read(n)
            if mask:
                data = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
            opcode = b0 & 0x0F
            if opcode == 8:
                sys.exit("DevTools closed the connection")
            if opcode in (9, 10):  # ping / pong: not used by DevTools in practice
                continue
            message += data
            if b0 & 0x80:
                return message.decode()


class Page:
    """One page's DevTools session: evaluate JavaScript in it."""

    def __init__(self, socket_url):
        self.ws = WebSocket(socket_url)
        self.next_id = 0

    def evaluate(self, expression):
        """The reply's `result` (value or exceptionDetails); exits on a protocol error."""
        self.next_id += 1
        self.ws.send(
            json.dumps(
                {
                    "id": self.next_id,
                    "method": "Runtime.evaluate",
                    "params": {
                        "expression": expression,
                        "awaitPromise": True,
                        "returnByValue": True,
                        "timeout": TIMEOUT * 1000,
                    },
                }
            )
        )
        while True:
            reply = json.loads(self.ws.receive())
            if reply.get("id") == self.next_id:
                break
        if "error" in reply:
            return {"protocolError": reply["error"]}
        return reply["result"]


def wait_until_loaded(page, prefix):
    """Until the page at `prefix` has loaded (evaluating earlier may hit the old document)."""
    check = f"document.readyState === 'complete' && location.href.startsWith({json.dumps(prefix)})"
    deadline = time.time() + TIMEOUT
    while time.time() < deadline:
        result = page.evaluate(check)
        if result.get("result", {}).get("value") is True:
            return
        time.sleep(0.1)
    sys.exit(f"the page at {prefix} did not finish loading")


def main():
    user_data_dir, prefix, script_file = sys.argv[1:4]
    with open(script_file) as f:
        expression = f.read()
    page = Page(page_socket_url(devtools_port(user_data_dir), prefix))
    wait_until_loaded(page, prefix)
    result = page.evaluate(expression)
    if "protocolError" in result:
        sys.exit(f"DevTools error: {result['protocolError']}")
    if "exceptionDetails" in result:
        details = result["exceptionDetails"]
        text = details.get("exception", {}).get("description") or details.get("text")
        sys.exit(f"the page script failed: {text}")
    json.dump(result["result"].get("value"), sys.stdout)
    print()


if __name__ == "__main__":
    main()
