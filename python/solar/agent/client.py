"""A client for OpenAI-compatible chat-completions servers (vLLM, llama.cpp's server, Ollama,
hosted APIs): one POST to `{base_url}/chat/completions` per request.

Written on the standard library rather than the `openai` package on purpose: the translation
loop needs guarantees that package does not give — a cap on the size of a reply (a server
that streams 20 MB, or never stops, must end in an error, not fill memory), a wall-clock cap
on one request that holds even while bytes keep arriving, and retries whose waits count
against the translation's own budget. The API key is sent only in the Authorization header;
it is never part of an error message, a transcript or a cache key.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field

from ..errors import Diagnostic, UserError

MAX_REPLY_BYTES = 4 << 20  # an IR program is kilobytes; a larger reply is refused unread
RETRY_STATUSES = (429, 500, 502, 503, 504)


class EndpointError(UserError):
    """The server could not give a usable reply (kind `endpoint`): unreachable, an HTTP
    error after the retries, a reply that is not a chat completion, too large or too slow.
    `retryable` says whether another iteration might do better (a slow or garbled reply)
    rather than the server being wrong for good (a 401, a missing model)."""

    def __init__(self, message: str, hint: str = "", retryable: bool = False):
        d = Diagnostic("endpoint", "", 0, 0, message, hint)
        super().__init__(str(d), [d])
        self.retryable = retryable


@dataclass(frozen=True)
class Endpoint:
    """Where and how to ask. `from_env` fills what is not given from SOLAR_LLM_BASE_URL,
    SOLAR_LLM_MODEL and SOLAR_LLM_API_KEY."""

    base_url: str
    model: str
    api_key: str = field(default="", repr=False)  # never printed
    timeout: float = 120.0  # seconds for one request, connection to last byte
    retries: int = 4  # further attempts on 429, 5xx and connection failures
    backoff: float = 1.0  # first wait in seconds, doubled per retry (Retry-After wins)
    max_wait: float = 30.0  # the longest single wait between attempts
    max_reply_bytes: int = MAX_REPLY_BYTES
    temperature: float = 0.0
    max_tokens: int = 8192  # per reply
    price_in: float = 0.0  # dollars per million prompt tokens (for the cost account)
    price_out: float = 0.0  # dollars per million completion tokens

    @staticmethod
    def from_env(base_url: str | None = None, model: str | None = None, **kw) -> Endpoint:
        base_url = base_url or os.environ.get("SOLAR_LLM_BASE_URL", "")
        model = model or os.environ.get("SOLAR_LLM_MODEL", "")
        if not base_url:
            raise EndpointError(
                "no LLM endpoint is configured",
                "pass --endpoint URL (an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1)"
                " or set SOLAR_LLM_BASE_URL; docs/agent.md",
            )
        if not base_url.startswith(("http://", "https://")):
            raise EndpointError(
                f"endpoint {base_url!r} is not an http(s) URL",
                "for example http://127.0.0.1:8000/v1",
            )
        if not model:
            raise EndpointError(
                "no model is configured", "pass --model NAME or set SOLAR_LLM_MODEL"
            )
        kw.setdefault("api_key", os.environ.get("SOLAR_LLM_API_KEY", ""))
        for name, env in (("price_in", "SOLAR_LLM_PRICE_IN"), ("price_out", "SOLAR_LLM_PRICE_OUT")):
            if name not in kw and os.environ.get(env):
                kw[name] = float(os.environ[env])
        return Endpoint(base_url.rstrip("/"), model, **kw)

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.price_in + completion_tokens * self.price_out) / 1e6


@dataclass
class Reply:
    text: str
    finish_reason: str  # "stop", "length" (cut off at max_tokens), ...
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    attempts: int  # HTTP requests it took (retries included)


def _read_capped(response, limit: int, deadline: float) -> bytes:
    """The body, refused once it passes `limit` bytes or the clock passes `deadline` (a
    server that keeps sending never ends the read by itself)."""
    chunks, size = [], 0
    length = response.headers.get("Content-Length")
    if length and length.isdigit() and int(length) > limit:
        raise EndpointError(
            f"the reply is {int(length):,} bytes, over the limit of {limit:,}",
            "an IR program is a few kilobytes; lower max_tokens or check the server",
            retryable=True,
        )
    while True:
        if time.monotonic() > deadline:
            raise EndpointError(
                "the reply did not finish within the request timeout",
                "raise the timeout (--request-timeout) or use a faster model",
                retryable=True,
            )
        chunk = response.read1(65536) if hasattr(response, "read1") else response.read(65536)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > limit:
            raise EndpointError(
                f"the reply passed the limit of {limit:,} bytes and was cut off",
                "an IR program is a few kilobytes; lower max_tokens or check the server",
                retryable=True,
            )
        chunks.append(chunk)


def _parse(body: bytes) -> tuple[str, str, int, int]:
    """(content, finish_reason, prompt tokens, completion tokens) of a chat completion."""
    try:
        data = json.loads(body)
        choice = data["choices"][0]
        content = choice["message"].get("content") or ""
        if not isinstance(content, str):
            raise TypeError("content is not a string")
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as e:
        preview = body[:120].decode("utf-8", "replace")
        raise EndpointError(
            f"the server's reply is not a chat completion ({type(e).__name__}: {e}); it "
            f"begins {preview!r}",
            "check that --endpoint is an OpenAI-compatible /v1 URL",
            retryable=True,
        ) from None
    usage = data.get("usage") or {}
    return (
        content,
        str(choice.get("finish_reason") or ""),
        int(usage.get("prompt_tokens") or 0),
        int(usage.get("completion_tokens") or 0),
    )


def _retry_after(error: urllib.error.HTTPError) -> float | None:
    value = error.headers.get("Retry-After") if error.headers else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None  # an HTTP date: use our own backoff


def chat(
    endpoint: Endpoint, messages: list[dict], deadline: float | None = None, sleep=None
) -> Reply:
    """One chat completion. Retries 429 and 5xx (waiting Retry-After where the server says,
    else an exponential backoff) and connection failures, up to endpoint.retries more times
    and never past `deadline` (time.monotonic()). Raises EndpointError otherwise."""
    sleep = sleep or time.sleep
    payload = json.dumps(
        {
            "model": endpoint.model,
            "messages": messages,
            "temperature": endpoint.temperature,
            "max_tokens": endpoint.max_tokens,
            "stream": False,
        }
    ).encode()
    headers = {"Content-Type": "application/json"}
    if endpoint.api_key:
        headers["Authorization"] = f"Bearer {endpoint.api_key}"
    url = f"{endpoint.base_url}/chat/completions"
    start = time.monotonic()
    wait = endpoint.backoff
    last = ""
    for attempt in range(1, endpoint.retries + 2):
        now = time.monotonic()
        if deadline is not None and now >= deadline:
            break
        limit = now + endpoint.timeout
        if deadline is not None:
            limit = min(limit, deadline)
        retry_in = None
        try:
            request = urllib.request.Request(url, payload, headers, method="POST")
            with urllib.request.urlopen(request, timeout=max(0.1, limit - now)) as response:
                body = _read_capped(response, endpoint.max_reply_bytes, limit)
            text, finish, p, c = _parse(body)
            return Reply(text, finish, p, c, time.monotonic() - start, attempt)
        except urllib.error.HTTPError as e:
            detail = e.read(300).decode("utf-8", "replace") if e.fp else ""
            last = f"HTTP {e.code} {e.reason}" + (f": {detail.strip()[:200]}" if detail else "")
            if e.code not in RETRY_STATUSES:
                hint = {
                    401: "check SOLAR_LLM_API_KEY",
                    403: "check SOLAR_LLM_API_KEY",
                    404: "check --endpoint (it should end in /v1) and --model",
                }.get(e.code, "")
                raise EndpointError(f"the server refused the request: {last}", hint) from None
            retry_in = _retry_after(e)
        except (urllib.error.URLError, TimeoutError, ConnectionError) as e:
            reason = getattr(e, "reason", e)
            last = f"{type(reason).__name__}: {reason}" if str(reason) else type(reason).__name__
        except EndpointError:
            raise
        except OSError as e:  # a connection dropped mid-reply
            last = f"{type(e).__name__}: {e}"
        if attempt > endpoint.retries:
            break
        pause = min(endpoint.max_wait, retry_in if retry_in is not None else wait)
        if deadline is not None and time.monotonic() + pause >= deadline:
            break
        sleep(pause)
        wait *= 2
    raise EndpointError(
        f"no reply from {endpoint.base_url} after {attempt} attempt(s): {last or 'out of time'}",
        "check that the server is running and reachable; retries and waits count against "
        "--max-seconds",
        retryable=False,
    )
