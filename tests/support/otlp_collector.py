"""An OTLP/HTTP trace collector in the test process, for tests of what traces receive.

`OtlpCollector` listens on 127.0.0.1 on a free port and serves from a background thread.
Each `POST /v1/traces` body is decoded as the protobuf `ExportTraceServiceRequest` the
exporter sends (with the `opentelemetry-proto` messages) and kept, with its headers and
raw bytes; the answer is an empty `ExportTraceServiceResponse`, as a collector's is::

    with OtlpCollector() as collector:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.endpoint)
        ...
        [turn] = [s for s in collector.spans() if s.name.startswith("invoke_agent")]

A request is kept before it is answered, so once the exporter's flush returned, what it
sent is here.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

TRACES_PATH = "/v1/traces"


@dataclass(frozen=True)
class Received:
    """One export request as it arrived."""

    path: str
    headers: dict[str, str]
    body: bytes
    message: ExportTraceServiceRequest


@dataclass(frozen=True)
class SpanEvent:
    name: str
    time_ns: int
    attributes: dict[str, Any]


@dataclass(frozen=True)
class CollectedSpan:
    """One received span, its ids as hex and its attributes as Python values."""

    name: str
    trace_id: str
    span_id: str
    parent_span_id: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    events: list[SpanEvent]
    links: list[str]
    """The span ids this span links to."""
    status_code: int
    status_message: str
    resource: dict[str, Any] = field(default_factory=dict)


def value_of(value: AnyValue) -> Any:
    """An OTLP `AnyValue` as the Python value it carries (arrays as tuples)."""
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return tuple(value_of(v) for v in value.array_value.values)
    if kind == "kvlist_value":
        return attributes_of(value.kvlist_value.values)
    return getattr(value, kind)


def attributes_of(pairs: Any) -> dict[str, Any]:
    found: dict[str, Any] = {}
    pair: KeyValue
    for pair in pairs:
        found[pair.key] = value_of(pair.value)
    return found


class OtlpCollector:
    """Receives OTLP/HTTP trace exports on 127.0.0.1 (see the module docstring)."""

    def __init__(self) -> None:
        self.received: list[Received] = []
        self._lock = threading.Lock()
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                message = ExportTraceServiceRequest()
                message.ParseFromString(body)
                with collector._lock:
                    collector.received.append(
                        Received(
                            self.path,
                            {key.lower(): value for key, value in self.headers.items()},
                            body,
                            message,
                        )
                    )
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # the test's output is not the place for an access log

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        """The base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT` takes it."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> OtlpCollector:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def spans(self) -> list[CollectedSpan]:
        """Every span received so far, in arrival order."""
        with self._lock:
            received = list(self.received)
        spans: list[CollectedSpan] = []
        for request in received:
            for resource_spans in request.message.resource_spans:
                resource = attributes_of(resource_spans.resource.attributes)
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        spans.append(
                            CollectedSpan(
                                name=span.name,
                                trace_id=span.trace_id.hex(),
                                span_id=span.span_id.hex(),
                                parent_span_id=span.parent_span_id.hex(),
                                start_ns=span.start_time_unix_nano,
                                end_ns=span.end_time_unix_nano,
                                attributes=attributes_of(span.attributes),
                                events=[
                                    SpanEvent(e.name, e.time_unix_nano, attributes_of(e.attributes))
                                    for e in span.events
                                ],
                                links=[link.span_id.hex() for link in span.links],
                                status_code=span.status.code,
                                status_message=span.status.message,
                                resource=resource,
                            )
                        )
        return spans
