"""ReplayServer, the loopback test server the provider and end-to-end tests share."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import httpx
import pytest

from tests.support.sse_server import ReplayServer, Script
from tests.support.wire import anthropic_events, openai_chunks, split_bytes


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    with httpx.Client() as client:
        yield client


def test_streams_chunks_and_records_the_request(http: httpx.Client) -> None:
    with ReplayServer([Script.sse(["data: 1\n\n", "data: 2\n\n"])]) as server:
        response = http.post(f"{server.base_url}/v1/x", json={"a": 1}, headers={"X-Key": "k"})
        [request] = server.requests
    assert response.text == "data: 1\n\ndata: 2\n\n"
    assert response.headers["content-type"] == "text/event-stream"
    assert (request.method, request.path, request.json) == ("POST", "/v1/x", {"a": 1})
    assert request.headers["x-key"] == "k"


def test_chunks_arrive_one_by_one(http: httpx.Client) -> None:
    release = threading.Event()
    script = Script.sse(["data: 1\n\n", "data: 2\n\n"], hold_after=1, release=release)
    with ReplayServer([script]) as server, http.stream("POST", server.base_url) as response:
        chunks = response.iter_raw()
        assert next(chunks) == b"data: 1\n\n"
        release.set()
        assert b"".join(chunks) == b"data: 2\n\n"


def test_json_body_answer(http: httpx.Client) -> None:
    with ReplayServer(
        [Script.json(401, {"error": {"message": "no"}}, headers={"x-a": "b"})]
    ) as server:
        response = http.get(server.base_url)
    assert (response.status_code, response.json(), response.headers["x-a"]) == (
        401,
        {"error": {"message": "no"}},
        "b",
    )


def test_exhausted_queue_answers_500_and_says_why(http: httpx.Client) -> None:
    with ReplayServer() as server:
        response = http.post(f"{server.base_url}/v1/messages", json={})
        assert "no scripted response left for POST /v1/messages" in server.errors[0]
    assert response.status_code == 500
    assert response.headers["x-should-retry"] == "false"
    assert "ReplayServer" in response.json()["error"]["message"]


def test_default_script_serves_every_extra_request(http: httpx.Client) -> None:
    with ReplayServer(default=Script.sse(["data: d\n\n"])) as server:
        assert [http.post(server.base_url).text for _ in range(2)] == ["data: d\n\n"] * 2


def test_responder_decides_per_request(http: httpx.Client) -> None:
    def responder(body: object, attempt: int) -> Script:
        return Script.json(200, {"attempt": attempt, "echo": body})

    with ReplayServer(responder=responder) as server:
        answers = [http.post(server.base_url, json={"n": n}).json() for n in range(2)]
    assert answers == [{"attempt": 0, "echo": {"n": 0}}, {"attempt": 1, "echo": {"n": 1}}]


def test_responder_that_raises_becomes_a_clear_500(http: httpx.Client) -> None:
    def responder(body: object, attempt: int) -> Script:
        raise KeyError("oops")

    with ReplayServer(responder=responder) as server:
        response = http.post(server.base_url, json={})
        assert "responder raised KeyError" in server.errors[0]
    assert response.status_code == 500


def test_queue_is_used_before_the_responder(http: httpx.Client) -> None:
    with ReplayServer(
        [Script.json(200, {"from": "queue"})],
        responder=lambda b, a: Script.json(200, {"from": "responder"}),
    ) as server:
        assert [http.get(server.base_url).json()["from"] for _ in range(2)] == [
            "queue",
            "responder",
        ]


def test_enqueue_adds_scripts_later(http: httpx.Client) -> None:
    with ReplayServer() as server:
        server.enqueue(Script.json(200, {"ok": True}))
        assert http.get(server.base_url).json() == {"ok": True}


def test_disconnect_after_cuts_the_body(http: httpx.Client) -> None:
    script = Script.sse(["data: 1\n\n", "data: 2\n\n"], disconnect_after=1)
    received = []
    with ReplayServer([script]) as server, http.stream("POST", server.base_url) as response:
        try:
            for chunk in response.iter_raw():
                received.append(chunk)
        except httpx.RemoteProtocolError:
            received.append(b"<cut>")
    assert received == [b"data: 1\n\n", b"<cut>"]


def test_close_framing_ends_the_body_by_closing(http: httpx.Client) -> None:
    with ReplayServer([Script.sse(["data: 1\n\n"], framing="close")]) as server:
        response = http.post(server.base_url)
    assert response.text == "data: 1\n\n"
    assert "transfer-encoding" not in response.headers


def test_wait_for_requests(http: httpx.Client) -> None:
    with ReplayServer(default=Script.json(200, {})) as server:
        thread = threading.Thread(target=http.get, args=(server.base_url,))
        thread.start()
        assert len(server.wait_for_requests(1, timeout=5)) == 1
        thread.join()


def test_stop_releases_a_held_stream(http: httpx.Client) -> None:
    server = ReplayServer([Script.sse(["data: 1\n\n", "data: 2\n\n"], hold_after=1)]).start()
    with http.stream("POST", server.base_url) as response:
        chunks = response.iter_raw()
        assert next(chunks) == b"data: 1\n\n"
        server.stop()
        with pytest.raises(httpx.RemoteProtocolError):
            list(chunks)


def test_wire_builders_produce_complete_events() -> None:
    body = "".join(openai_chunks(text="hi", tool_calls=[("c", "f", "{}")]))
    assert body.endswith("data: [DONE]\n\n") and body.count("\n\n") == body.count("data: ")
    events = anthropic_events(text="hi", tool_uses=[("t", "f", "{}")])
    assert events[0].startswith("event: message_start\n") and events[-1].startswith(
        "event: message_stop\n"
    )
    assert b"".join(split_bytes(events, every=3)) == "".join(events).encode()
