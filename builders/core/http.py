"""The one HTTP layer: a session with a clear User-Agent, retries, JSON and downloads.

Every network call of the project goes through here, so retry, back-off and secret
handling are written once:

- 429 and 5xx answers and dropped connections are retried with jittered exponential
  back-off (bounded); a `Retry-After` header (seconds or an HTTP date) is honoured.
- When it gives up it raises a `BabelforgeError` with one line naming the request.
- Secrets never reach a message or a log line: query parameters named like a key are
  masked in every URL this module prints, values passed to `register_secret` are masked
  anywhere, and urllib3's debug log of request lines gets the same treatment.
- `download` streams into `<dest>.part`, resumes it with `Range`, checks sha256 and
  renames atomically, so `dest` is either absent or complete and verified.

`requests` is imported inside the functions: importing this module costs nothing.
"""

from __future__ import annotations

import dataclasses
import email.utils
import hashlib
import logging
import os
import platform
import random
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import babelforge
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import atomic_path, sha256_file
from babelforge.core.pins import PinHome, mismatch_line
from babelforge.core.progress import progress

if TYPE_CHECKING:  # pragma: no cover
    import requests

# Query parameters whose values are credentials, masked wherever a URL is printed.
SECRET_PARAMS = ("key", "apikey", "api_key", "token", "access_token", "auth")
MASK = "***"

_secrets: set[str] = set()
_SECRET_QUERY = re.compile(
    r"(?i)(?P<name>[?&;](?:{})=)[^&#\s\"'<>]*".format("|".join(re.escape(p) for p in SECRET_PARAMS))
)


class HttpError(BabelforgeError):
    """A request that could not be completed (after retries where they apply)."""


class HttpStatusError(HttpError):
    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


class MalformedResponseError(HttpError):
    """The server answered 2xx but the body is not the JSON it should be."""


class ChecksumMismatchError(BabelforgeError):
    def __init__(self, message: str, expected: str, actual: str):
        super().__init__(message)
        self.expected, self.actual = expected, actual


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try. Tests pass tiny delays; the defaults suit real servers."""

    attempts: int = 5  # total tries of one request, first one included
    base_delay: float = 1.0  # back-off before retry n is base_delay * 2**n, jittered
    max_delay: float = 60.0  # ... and never longer than this
    max_retry_after: float = 900.0  # a longer Retry-After means "not today": give up at once
    timeout: float = 30.0  # seconds to connect and between bytes read

    def __post_init__(self):
        if self.attempts < 1:
            raise BabelforgeError(f"retry attempts must be at least 1, got {self.attempts}")


# `BABELFORGE_HTTP_POLICY=attempts=2,base_delay=0.01,timeout=1` overrides fields of the default
# policy for a run: tests of a failing server (and a user on a flaky link) need no code change.
POLICY_ENV = "BABELFORGE_HTTP_POLICY"


def policy_from_text(text: str | None, base: RetryPolicy = RetryPolicy()) -> RetryPolicy:
    """`base` with `name=value` pairs (comma-separated) applied; one line naming a bad pair."""

    if not text or not text.strip():
        return base
    names = {f.name: f.type for f in dataclasses.fields(RetryPolicy)}
    changes: dict[str, Any] = {}
    for pair in text.split(","):
        name, _, value = pair.strip().partition("=")
        try:
            changes[name] = (int if names[name] in ("int", int) else float)(value)
        except (KeyError, ValueError):
            raise BabelforgeError(
                f"{POLICY_ENV}: {pair.strip()!r} is not name=number with a name of {', '.join(names)}"
            ) from None
    return dataclasses.replace(base, **changes)


DEFAULT_POLICY = policy_from_text(os.environ.get(POLICY_ENV))


# --- secrets -----------------------------------------------------------------------------


def register_secret(value: str | None) -> None:
    """Mask `value` in every message and log line this module produces from now on."""
    if value and len(value) >= 4:
        _secrets.add(value)
        _install_log_filter()


def redact(text: str) -> str:
    """`text` with secret query values and registered secrets replaced by ***."""
    text = _SECRET_QUERY.sub(lambda m: m.group("name") + MASK, str(text))
    for secret in _secrets:
        text = text.replace(secret, MASK)
    return text


def describe(url: str, params: Mapping[str, Any] | None = None) -> str:
    """The request as one printable URL, secrets masked (for messages, never for sending)."""
    if params:
        shown = [(k, MASK if k.lower() in SECRET_PARAMS else v) for k, v in params.items()]
        url = f"{url}{'&' if '?' in url else '?'}{urlencode(shown, doseq=True)}"
    return redact(url)


class _RedactingFilter(logging.Filter):
    """urllib3 logs each request line (query string included) at DEBUG: mask it."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


_log_filter = _RedactingFilter()


def _install_log_filter() -> None:
    # Filters apply to the logger a record is created on, so name the ones that log URLs.
    for name in ("urllib3.connectionpool", "urllib3.util.retry", "requests"):
        logger = logging.getLogger(name)
        if _log_filter not in logger.filters:
            logger.addFilter(_log_filter)


# --- session and retries -----------------------------------------------------------------


def default_user_agent() -> str:

    return f"babelforge/{babelforge.__version__} (benchmark builder; Python {platform.python_version()})"


def make_session(user_agent: str | None = None) -> requests.Session:
    """A `requests.Session` that names babelforge and accepts gzip."""
    import requests

    _install_log_filter()
    session = requests.Session()
    session.headers["User-Agent"] = user_agent or default_user_agent()
    session.headers["Accept-Encoding"] = "gzip"
    return session


def is_retryable_status(status: int) -> bool:
    return status == 429 or 500 <= status <= 599


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a `Retry-After` header (delta-seconds or HTTP date); None if absent/bad."""
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    now = time.time() if now is None else now
    return max(0.0, when.timestamp() - now)


def backoff_delay(retry: int, policy: RetryPolicy, rng: random.Random | None = None) -> float:
    """Delay before retry number `retry` (0-based): exponential, capped, jittered to 50-100 %."""
    ceiling = min(policy.max_delay, policy.base_delay * (2**retry))
    return ceiling * (rng or random).uniform(0.5, 1.0)


def _connection_errors() -> tuple[type[BaseException], ...]:
    import requests

    return (
        requests.ConnectionError,
        requests.Timeout,
        requests.exceptions.ChunkedEncodingError,
        requests.exceptions.ContentDecodingError,
    )


def _request_errors() -> tuple[type[BaseException], ...]:
    import requests

    return (requests.RequestException,)


def request(
    session: requests.Session,
    method: str,
    url: str,
    *,
    params: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
    stream: bool = False,
    policy: RetryPolicy = DEFAULT_POLICY,
    give_up: Callable[[requests.Response], bool] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> requests.Response:
    """Send a request, retrying 429/5xx and connection failures; return the final response.

    Any other status (2xx, 3xx, 4xx) is returned for the caller to judge. `give_up(response)`
    returning True stops retrying at once (e.g. an API saying its daily quota is spent).
    Raises `HttpError` after `policy.attempts` tries, or when `Retry-After` asks for longer
    than `policy.max_retry_after`.
    """
    shown = describe(url, params)
    problem = ""
    for attempt in range(policy.attempts):
        delay: float | None = None
        try:
            response = session.request(
                method,
                url,
                params=params,
                headers=dict(headers or {}),
                stream=stream,
                timeout=policy.timeout,
            )
        except _connection_errors() as error:
            problem = f"{type(error).__name__}: {redact(str(error))}"
        except _request_errors() as error:  # a bad URL and the like: retrying will not help
            raise HttpError(f"{method} {shown}: {type(error).__name__}: {redact(str(error))}") from None
        else:
            if not is_retryable_status(response.status_code) or (give_up and give_up(response)):
                return response
            problem = f"HTTP {response.status_code}"
            delay = retry_after_seconds(response.headers.get("Retry-After"))
            response.close()
            if delay is not None and delay > policy.max_retry_after:
                raise HttpError(
                    f"{method} {shown}: server answered {problem} and asks to retry after "
                    f"{delay:.0f} s (more than {policy.max_retry_after:.0f} s); try again later"
                )
        if attempt + 1 < policy.attempts:
            sleep(backoff_delay(attempt, policy) if delay is None else delay)
    raise HttpError(
        f"{method} {shown}: gave up after {policy.attempts} attempts (last: {problem}); "
        f"check the network or try again later"
    )


def get_json(
    session: requests.Session,
    url: str,
    params: Mapping[str, Any] | None = None,
    *,
    policy: RetryPolicy = DEFAULT_POLICY,
    give_up: Callable[[requests.Response], bool] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> Any:
    """GET `url` and parse its JSON body; `HttpStatusError` on a non-2xx answer."""
    response = request(session, "GET", url, params=params, policy=policy, give_up=give_up, sleep=sleep)
    return parse_json(response, describe(url, params))


def parse_json(response: requests.Response, shown: str) -> Any:
    if not response.ok:
        raise HttpStatusError(
            f"GET {shown}: HTTP {response.status_code} {response.reason or ''}".rstrip(),
            response.status_code,
        )
    try:
        return response.json()
    except ValueError as error:
        raise MalformedResponseError(f"GET {shown}: the answer is not valid JSON ({error})") from None


# --- downloads ---------------------------------------------------------------------------


class _Incomplete(Exception):
    """The body ended before Content-Length bytes arrived."""


def _content_range_start(value: str | None) -> int | None:
    match = re.match(r"bytes\s+(\d+)-\d+/(?:\d+|\*)", value or "")
    return int(match.group(1)) if match else None


def download(
    url: str,
    dest: str | os.PathLike,
    sha256: str,
    *,
    session: requests.Session | None = None,
    policy: RetryPolicy = DEFAULT_POLICY,
    chunk_size: int = 1 << 16,
    desc: str | None = None,
    sleep: Callable[[float], None] = time.sleep,
    pin: PinHome | None = None,
) -> Path:
    """Download `url` to `dest`, verified against `sha256`; resumable, atomic.

    The body goes to `<dest>.part`. A later call (or a retry after a dropped connection)
    asks for the rest with `Range`; a server that ignores it (200 instead of 206) gets a
    fresh start. On success the part file is checked and renamed onto `dest`; on a wrong
    checksum it is deleted and `ChecksumMismatchError` names expected, actual and the URL (and, given
    `pin`, the input, where its pin lives and how to accept the new bytes). An existing `dest` with the right checksum is left alone (no request).
    """

    dest = Path(dest)
    shown = describe(url)
    if dest.is_file() and sha256_file(dest) == sha256:
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    session = session or make_session()
    connection_errors = _connection_errors()

    problem = ""
    for attempt in range(policy.attempts):
        offset = part.stat().st_size if part.exists() else 0
        # identity: byte offsets must be file offsets, which compressed transfer breaks
        headers = {"Accept-Encoding": "identity"}
        if offset:
            headers["Range"] = f"bytes={offset}-"
        try:
            response = request(session, "GET", url, headers=headers, stream=True, policy=policy, sleep=sleep)
            with response:
                if response.status_code == 416 and offset:
                    # Nothing left to send: the part file is complete, or longer than the
                    # file (stale). The checksum below decides; a stale part restarts.
                    if sha256_file(part) == sha256:
                        break
                    part.unlink()
                    raise _Incomplete("stale partial file")
                if response.status_code not in (200, 206):
                    raise HttpStatusError(
                        f"GET {shown}: HTTP {response.status_code} {response.reason or ''}".rstrip(),
                        response.status_code,
                    )
                resumed = response.status_code == 206
                if resumed and _content_range_start(response.headers.get("Content-Range")) != offset:
                    part.unlink(missing_ok=True)  # a range we did not ask for: start over
                    raise _Incomplete("server sent another range than asked")
                start = offset if resumed else 0
                length = response.headers.get("Content-Length")
                expected_size = start + int(length) if length and length.isdigit() else None
                n_chunks = -(-(expected_size - start) // chunk_size) if expected_size is not None else None
                with open(part, "ab" if resumed else "wb") as handle:
                    chunks = response.iter_content(chunk_size=chunk_size)
                    for chunk in progress(chunks, desc=desc or dest.name, total=n_chunks, unit="chunk"):
                        handle.write(chunk)
                if expected_size is not None and part.stat().st_size < expected_size:
                    raise _Incomplete(f"got {part.stat().st_size} of {expected_size} bytes")
            break
        except (_Incomplete, *connection_errors) as error:
            problem = f"{type(error).__name__}: {redact(str(error))}"
            if attempt + 1 < policy.attempts:
                sleep(backoff_delay(attempt, policy))
    else:
        raise HttpError(
            f"GET {shown}: download incomplete after {policy.attempts} attempts (last: {problem}); "
            f"rerun to resume from {part}"
        )

    actual = sha256_file(part)
    if actual != sha256:
        part.unlink()
        raise ChecksumMismatchError(
            mismatch_line(pin, sha256, actual, shown)
            if pin
            else f"{shown}: sha256 mismatch, expected {sha256}, got {actual}; the download was deleted "
            f"(upstream changed or the transfer is corrupt: check the URL and hash in resources/)",
            expected=sha256,
            actual=actual,
        )
    os.chmod(part, 0o644)
    os.replace(part, dest)
    return dest


def remote_sha256(
    url: str,
    *,
    session: requests.Session | None = None,
    policy: RetryPolicy = DEFAULT_POLICY,
    headers: Mapping[str, str] | None = None,
    chunk_size: int = 1 << 20,
) -> tuple[str, int]:
    """(sha256, bytes) of what `url` serves, streamed and hashed, nothing kept: how a pin is first
    resolved (`babelforge pins --update`); every later fetch verifies against it."""
    session = session or make_session()
    shown = describe(url)
    response = request(
        session, "GET", url, headers={"Accept-Encoding": "identity", **(headers or {})}, stream=True, policy=policy
    )
    with response:
        if response.status_code != 200:
            raise HttpStatusError(
                f"GET {shown}: HTTP {response.status_code} {response.reason or ''}".rstrip(), response.status_code
            )
        digest, size = hashlib.sha256(), 0
        for chunk in response.iter_content(chunk_size=chunk_size):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


COPY_CHUNK = 1 << 20


def copy_verified(
    src: Path, dest: Path, sha256: str, what: str, missing_hint: str, mismatch_hint: str, pin: PinHome | None = None
) -> None:
    """Copy a local mirror's `src` to `dest` through a temporary file, hashing on the way: `dest` appears
    only when the bytes are the pinned ones (the local twin of `download`). The hints say what to do; given
    `pin`, a mismatch is `mismatch_line`'s."""
    if not src.is_file():
        raise BabelforgeError(f"{what}: {src} is missing from the mirror; {missing_hint}")
    digest = hashlib.sha256()
    with atomic_path(dest) as tmp:
        with open(src, "rb") as reader, open(tmp, "wb") as writer:
            while block := reader.read(COPY_CHUNK):
                digest.update(block)
                writer.write(block)
        if digest.hexdigest() != sha256:
            raise ChecksumMismatchError(
                mismatch_line(pin, sha256, digest.hexdigest(), str(src))
                if pin
                else f"{what}: {src} has sha256 {digest.hexdigest()}, expected {sha256}; {mismatch_hint}",
                expected=sha256,
                actual=digest.hexdigest(),
            )
