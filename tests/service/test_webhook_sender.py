"""The webhook sender against a real HTTP server on this host: refused unless its network
is allowed, and then connected to the address that was checked."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from webhooks.delivery import sender


@pytest.fixture
def server() -> Iterator[tuple[int, list[str]]]:
    got: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            got.append(self.headers.get("Host", ""))
            self.send_response(204)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv.server_address[1], got
    srv.shutdown()
    srv.server_close()


def test_a_receiver_on_this_host_is_refused_by_default(server, monkeypatch) -> None:
    port, got = server
    monkeypatch.delenv("WEBHOOK_ALLOWED_NETWORKS", raising=False)
    for host in ("127.0.0.1", "localhost"):
        with pytest.raises(sender.DeliveryFailed, match=sender.NOT_ALLOWED):
            sender.post(f"http://{host}:{port}/hook", b"{}", {}, 5.0)
    with pytest.raises(sender.DeliveryFailed, match=sender.NOT_ALLOWED):
        sender.post("http://169.254.169.254/latest/meta-data/", b"{}", {}, 5.0)
    assert got == []


def test_an_allowed_network_is_reached_under_the_url_s_host_name(server, monkeypatch) -> None:
    port, got = server
    monkeypatch.setenv("WEBHOOK_ALLOWED_NETWORKS", "127.0.0.0/8, ::1/128")
    assert sender.post(f"http://localhost:{port}/hook", b"{}", {}, 5.0) == 204
    assert sender.post(f"http://127.0.0.1:{port}/hook", b"{}", {}, 5.0) == 204
    assert got == [f"localhost:{port}", f"127.0.0.1:{port}"]


def test_an_unknown_host_fails_with_its_kind_only(monkeypatch) -> None:
    monkeypatch.setenv("WEBHOOK_ALLOWED_NETWORKS", "127.0.0.0/8")
    with pytest.raises(sender.DeliveryFailed) as failed:
        sender.post("http://no-such-host.invalid/hook", b"{}", {}, 2.0)
    assert str(failed.value) == "gaierror"
