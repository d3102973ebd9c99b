"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1 for the agent's tests
(and bench/agent_eval.py's smoke test): a real HTTP server in a thread that answers each
POST /v1/chat/completions with the next scripted step and records every request body.

A step is one of
  reply(text, finish="stop")             a chat completion with that content
  status(code, body="", retry_after=None) an HTTP error
  raw(body, content_type)                any bytes (garbage)
  huge(n, declared=True)                 a body of n bytes (with or without Content-Length)
  endless(seconds)                       headers (no length), then a byte every 0.05 s
or a function(request_json) -> step, consulted for every request (a server that answers by
what it is asked). An exhausted script answers 500.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def reply(text: str, finish: str = "stop", prompt_tokens: int = 1000, completion_tokens: int = 200):
    return ("reply", text, finish, prompt_tokens, completion_tokens)


def status(code: int, body: str = "", retry_after=None):
    return ("status", code, body, retry_after)


def raw(body: bytes, content_type: str = "application/json"):
    return ("raw", body, content_type)


def huge(n: int, declared: bool = True):
    return ("huge", n, declared)


def endless(seconds: float):
    return ("endless", seconds)


def fenced(program: str, prose: str = "Here is the program.") -> str:
    return f"{prose}\n\n```python\n{program.strip()}\n```\n"


class ScriptedServer:
    def __init__(self, script):
        self.script = script if callable(script) else list(script)
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with server.lock:
                    server.requests.append(body)
                    server.headers.append(dict(self.headers))
                    if callable(server.script):
                        step = server.script(body)
                    else:
                        step = server.script.pop(0) if server.script else status(500, "script done")
                try:
                    self._answer(step)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a reply too large or too slow)

            def _send(self, code, body: bytes, content_type="application/json", extra=()):
                self.send_response(code)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                for k, v in extra:
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

            def _answer(self, step):
                kind = step[0]
                if kind == "reply":
                    _, text, finish, p, c = step
                    body = {
                        "id": "chatcmpl-scripted",
                        "object": "chat.completion",
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": text},
                                "finish_reason": finish,
                            }
                        ],
                        "usage": {
                            "prompt_tokens": p,
                            "completion_tokens": c,
                            "total_tokens": p + c,
                        },
                    }
                    self._send(200, json.dumps(body).encode())
                elif kind == "status":
                    _, code, text, retry_after = step
                    extra = [("Retry-After", str(retry_after))] if retry_after is not None else []
                    self._send(code, text.encode(), "text/plain", extra)
                elif kind == "raw":
                    self._send(200, step[1], step[2])
                elif kind == "huge":
                    n, declared = step[1], step[2]
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    if declared:
                        self.send_header("Content-Length", str(n))
                    else:  # the body ends when the connection closes
                        self.send_header("Connection", "close")
                        self.close_connection = True
                    self.end_headers()
                    block = b"x" * 65536
                    sent = 0
                    while sent < n:
                        chunk = block[: min(len(block), n - sent)]
                        self.wfile.write(chunk)
                        sent += len(chunk)
                elif kind == "endless":
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Connection", "close")
                    self.close_connection = True
                    self.end_headers()
                    stop = time.monotonic() + step[1]
                    while time.monotonic() < stop:
                        self.wfile.write(b" ")
                        self.wfile.flush()
                        time.sleep(0.05)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()

    def user_messages(self, i: int) -> list[str]:
        """The user messages of request i."""
        return [m["content"] for m in self.requests[i]["messages"] if m["role"] == "user"]
