"""babelforge.core.http against a loopback server serving the real source mirror."""

from __future__ import annotations

import email.utils
import hashlib
import json
import logging
import random

import pytest

from babelforge.core import http
from babelforge.core.errors import BabelforgeError

SIB_FILE = "sib-200/annotated/deu_Latn/train.tsv"
XTD_FILE = "xtd/xtd.json"


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def session():
    with http.make_session() as session:
        yield session


# --- pure helpers ----------------------------------------------------------------------


def test_retry_after_parses_seconds_and_http_dates():
    now = 1_700_000_000.0
    assert http.retry_after_seconds("7") == 7.0
    assert http.retry_after_seconds(email.utils.formatdate(now + 42, usegmt=True), now=now) == pytest.approx(42)
    assert http.retry_after_seconds(email.utils.formatdate(now - 60, usegmt=True), now=now) == 0.0
    assert http.retry_after_seconds(None) is None
    assert http.retry_after_seconds("soon") is None


def test_backoff_is_exponential_jittered_and_bounded():
    policy = http.RetryPolicy(base_delay=1.0, max_delay=10.0)
    rng = random.Random(0)
    for retry in range(8):
        ceiling = min(10.0, 2.0**retry)
        delays = {http.backoff_delay(retry, policy, rng) for _ in range(20)}
        assert all(ceiling / 2 <= delay <= ceiling for delay in delays)
        assert len(delays) > 1  # jittered, not a fixed schedule


def test_secrets_are_masked_in_descriptions_and_registered_values():
    shown = http.describe("https://babelnet.io/v9/getSynset", {"id": "bn:00015267n", "key": "s3cr3t-key"})
    assert "s3cr3t-key" not in shown and "id=bn%3A00015267n" in shown and "key=***" in shown
    http.register_secret("tok-123456")
    assert (
        http.redact("failed: Connection to host?x=1 with tok-123456 refused")
        == "failed: Connection to host?x=1 with *** refused"
    )


# --- requests and JSON -----------------------------------------------------------------


def test_get_json_sends_user_agent_and_accepts_gzip(server, session, mirror):
    server.gzip_json = True
    data = http.get_json(session, server.url + XTD_FILE)
    assert data == json.loads((mirror / XTD_FILE).read_text(encoding="utf-8"))
    (headers,) = server.hits(XTD_FILE)
    assert headers["User-Agent"].startswith("babelforge/")
    assert "gzip" in headers["Accept-Encoding"]


def test_503_is_retried_until_success(server, session, fast_policy, sleeps):
    recorded, sleep = sleeps
    server.failures[XTD_FILE] = ["503", "503"]
    data = http.get_json(session, server.url + XTD_FILE, policy=fast_policy, sleep=sleep)
    assert len(data["images"]) == 1000
    assert len(server.hits(XTD_FILE)) == 3
    assert len(recorded) == 2 and all(0 < delay <= fast_policy.max_delay for delay in recorded)


def test_429_honours_retry_after_seconds_and_date(server, session, fast_policy, sleeps):
    recorded, sleep = sleeps
    soon = email.utils.formatdate(__import__("time").time() + 20, usegmt=True)
    server.failures[XTD_FILE] = ["429:3", f"429:{soon}"]
    http.get_json(session, server.url + XTD_FILE, policy=fast_policy, sleep=sleep)
    assert recorded[0] == 3.0
    assert 15 <= recorded[1] <= 20
    assert len(server.hits(XTD_FILE)) == 3


def test_gives_up_with_one_clear_line_after_the_attempts(server, session, fast_policy, sleeps):
    _, sleep = sleeps
    server.failures[XTD_FILE] = ["503"] * 10
    with pytest.raises(http.HttpError) as caught:
        http.get_json(session, server.url + XTD_FILE, params={"key": "hidden-value-1"}, policy=fast_policy, sleep=sleep)
    message = str(caught.value)
    assert isinstance(caught.value, BabelforgeError)
    assert "\n" not in message and "gave up after 3 attempts" in message and "HTTP 503" in message
    assert XTD_FILE in message and "hidden-value-1" not in message
    assert len(server.hits(XTD_FILE)) == fast_policy.attempts


def test_retry_after_beyond_the_limit_gives_up_at_once(server, session, fast_policy, sleeps):
    recorded, sleep = sleeps
    server.failures[XTD_FILE] = ["429:86400"]
    with pytest.raises(http.HttpError, match="retry after 86400 s"):
        http.get_json(session, server.url + XTD_FILE, policy=fast_policy, sleep=sleep)
    assert recorded == [] and len(server.hits(XTD_FILE)) == 1


def test_client_errors_are_not_retried(server, session, fast_policy):
    with pytest.raises(http.HttpStatusError) as caught:
        http.get_json(session, server.url + "xtd/absent.json", policy=fast_policy)
    assert caught.value.status == 404
    assert len(server.hits("xtd/absent.json")) == 1


def test_malformed_json_is_a_clear_error(server, session, fast_policy):
    server.files["broken.json"] = b'{"senses": [ '
    with pytest.raises(http.MalformedResponseError, match="not valid JSON"):
        http.get_json(session, server.url + "broken.json", policy=fast_policy)


def test_connection_refused_is_retried_then_reported(fast_policy, sleeps, session):
    recorded, sleep = sleeps
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(http.HttpError, match="ConnectionError"):
        http.get_json(
            session,
            f"http://127.0.0.1:{port}/x.json",
            params={"key": "hidden-value-2"},
            policy=fast_policy,
            sleep=sleep,
        )
    assert len(recorded) == fast_policy.attempts - 1


def test_key_never_reaches_the_debug_log(server, session, fast_policy, caplog):
    http.register_secret("hidden-value-3")
    with caplog.at_level(logging.DEBUG):
        http.get_json(session, server.url + XTD_FILE, params={"key": "hidden-value-3"}, policy=fast_policy)
    assert any(XTD_FILE in record.getMessage() for record in caplog.records)  # urllib3 did log the request
    assert "hidden-value-3" not in caplog.text


# --- downloads -------------------------------------------------------------------------


def test_download_verifies_and_renames(server, mirror, tmp_path, fast_policy):
    expected = (mirror / SIB_FILE).read_bytes()
    dest = http.download(server.url + SIB_FILE, tmp_path / "train.tsv", sha256_bytes(expected), policy=fast_policy)
    assert dest.read_bytes() == expected
    assert not (tmp_path / "train.tsv.part").exists()
    assert server.hits(SIB_FILE)[0]["Accept-Encoding"] == "identity"


def test_existing_verified_file_needs_no_request(server, mirror, tmp_path, fast_policy):
    expected = (mirror / SIB_FILE).read_bytes()
    (tmp_path / "train.tsv").write_bytes(expected)
    http.download(server.url + SIB_FILE, tmp_path / "train.tsv", sha256_bytes(expected), policy=fast_policy)
    assert server.hits(SIB_FILE) == []


@pytest.mark.parametrize("range_support", [True, False])
def test_truncated_transfer_resumes_or_restarts(server, mirror, tmp_path, fast_policy, sleeps, range_support):
    _, sleep = sleeps
    server.range_support = range_support
    server.failures[XTD_FILE] = ["truncate"]
    expected = (mirror / XTD_FILE).read_bytes()
    dest = http.download(
        server.url + XTD_FILE, tmp_path / "xtd.json", sha256_bytes(expected), policy=fast_policy, sleep=sleep
    )
    assert dest.read_bytes() == expected
    first, second = server.hits(XTD_FILE)
    assert "Range" not in first
    # the retry asks only for what is missing (what arrived before the cut was kept);
    # a server that ignores Range sends everything again, and that is fine too
    kept = int(second["Range"].removeprefix("bytes=").rstrip("-"))
    assert 0 < kept <= len(expected) // 2


def test_partial_file_from_a_killed_run_is_resumed(server, mirror, tmp_path, fast_policy):
    expected = (mirror / XTD_FILE).read_bytes()
    (tmp_path / "xtd.json.part").write_bytes(expected[:1000])
    http.download(server.url + XTD_FILE, tmp_path / "xtd.json", sha256_bytes(expected), policy=fast_policy)
    assert (tmp_path / "xtd.json").read_bytes() == expected
    (headers,) = server.hits(XTD_FILE)
    assert headers["Range"] == "bytes=1000-"


def test_complete_partial_file_gets_416_and_is_accepted(server, mirror, tmp_path, fast_policy):
    expected = (mirror / SIB_FILE).read_bytes()
    (tmp_path / "train.tsv.part").write_bytes(expected)
    http.download(server.url + SIB_FILE, tmp_path / "train.tsv", sha256_bytes(expected), policy=fast_policy)
    assert (tmp_path / "train.tsv").read_bytes() == expected


def test_wrong_checksum_deletes_and_names_expected_actual_url(server, mirror, tmp_path, fast_policy):
    actual = sha256_bytes((mirror / SIB_FILE).read_bytes())
    wrong = "0" * 64
    with pytest.raises(http.ChecksumMismatchError) as caught:
        http.download(server.url + SIB_FILE, tmp_path / "train.tsv", wrong, policy=fast_policy)
    message = str(caught.value)
    assert wrong in message and actual in message and server.url + SIB_FILE in message
    assert list(tmp_path.iterdir()) == []


def test_corrupted_transfer_is_caught(server, mirror, tmp_path, fast_policy):
    server.failures[SIB_FILE] = ["corrupt"]
    expected = sha256_bytes((mirror / SIB_FILE).read_bytes())
    with pytest.raises(http.ChecksumMismatchError):
        http.download(server.url + SIB_FILE, tmp_path / "train.tsv", expected, policy=fast_policy)
    assert not (tmp_path / "train.tsv").exists() and not (tmp_path / "train.tsv.part").exists()


def test_download_retries_503_and_reports_404(server, mirror, tmp_path, fast_policy, sleeps):
    _, sleep = sleeps
    server.failures[SIB_FILE] = ["503"]
    expected = (mirror / SIB_FILE).read_bytes()
    http.download(server.url + SIB_FILE, tmp_path / "a.tsv", sha256_bytes(expected), policy=fast_policy, sleep=sleep)
    assert (tmp_path / "a.tsv").read_bytes() == expected and len(server.hits(SIB_FILE)) == 2
    with pytest.raises(http.HttpStatusError, match="HTTP 404"):
        http.download(server.url + "nope.tsv", tmp_path / "b.tsv", "0" * 64, policy=fast_policy)
    assert not (tmp_path / "b.tsv").exists()


def test_download_gives_up_when_every_transfer_is_cut(server, mirror, tmp_path, fast_policy, sleeps):
    _, sleep = sleeps
    server.range_support = False
    server.failures[XTD_FILE] = ["truncate"] * 10
    expected = sha256_bytes((mirror / XTD_FILE).read_bytes())
    with pytest.raises(http.HttpError, match="incomplete after 3 attempts"):
        http.download(server.url + XTD_FILE, tmp_path / "xtd.json", expected, policy=fast_policy, sleep=sleep)
    assert not (tmp_path / "xtd.json").exists()  # only the resumable .part remains


def test_importing_the_module_imports_no_http_library():
    import subprocess
    import sys

    code = "import sys, babelforge.core.http, babelforge.pipeline.fetch_stage; print('requests' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_a_malformed_url_is_reported_without_the_key(session, fast_policy):
    with pytest.raises(http.HttpError) as caught:
        http.get_json(session, "babelnet.io/v9/getSynset", params={"key": "hidden-value-4"}, policy=fast_policy)
    assert "MissingSchema" in str(caught.value) and "hidden-value-4" not in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
