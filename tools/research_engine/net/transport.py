"""The pinned-address transport: sockets go only to the addresses the SSRF guard checked.

`PinnedAddresses` holds, per (host, port), the addresses the guard allowed for the latest
check; `pinned_transport` builds an httpx transport on an httpcore connection pool whose
network backend connects only to those addresses, so a second DNS answer (rebinding) can
never choose where a socket goes. The URL keeps its host name: the Host header, TLS SNI
and certificate checks are the ordinary ones. `open_http` wraps it in the `httpx.Client`
the `HttpClient` sends through (no environment proxy, no automatic redirects).

This module decides nothing about URLs: it never checks, resolves or fetches one.
httpx and httpcore are imported when a transport is built, so the CLI starts without them.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import ssl

    import httpx

# A transport hook (a cassette's recorder or replayer) wraps or replaces the real transport.
TransportHook = Callable[[Any], Any]


class PinnedAddresses:
    """The guard's checked addresses per (host, port), shared by the client and its transport."""

    def __init__(self) -> None:
        self._pins: dict[tuple[str, int], list[str]] = {}
        self._lock = threading.Lock()

    def pin(self, host: str, port: int, addresses: Iterable[str]) -> None:
        with self._lock:
            self._pins[(host.lower(), int(port))] = list(addresses)

    def addresses(self, host: str, port: int) -> list[str]:
        with self._lock:
            return list(self._pins.get((host.lower(), int(port)), ()))


def open_http(
    pins: PinnedAddresses, *, user_agent: str, transport_hook: TransportHook | None = None
) -> httpx.Client:
    """The httpx client an HttpClient sends through: pinned sockets, our headers, nothing automatic."""
    import httpx  # noqa: PLC0415 - heavy; only a client that fetches needs it

    transport = pinned_transport(pins)
    if transport_hook is not None:
        transport = transport_hook(transport)
    # trust_env=False: an environment proxy would connect somewhere the guard never checked.
    return httpx.Client(
        transport=transport,
        trust_env=False,
        follow_redirects=False,
        headers={"User-Agent": user_agent, "Accept-Encoding": "gzip, deflate"},
    )


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """One verifying TLS context per process: loading the CA bundle takes ~80 ms; a context is shareable."""
    import httpx  # noqa: PLC0415 - heavy; only a client that fetches needs it

    return httpx.create_ssl_context(trust_env=False)


def pinned_transport(pins: PinnedAddresses) -> httpx.BaseTransport:
    """An httpx transport whose sockets go only to addresses the guard checked for (host, port)."""
    import httpcore  # noqa: PLC0415 - heavy; only a client that fetches needs it
    import httpx  # noqa: PLC0415 - heavy; only a client that fetches needs it

    class PinnedBackend(httpcore.NetworkBackend):
        def __init__(self) -> None:
            self._inner = httpcore.SyncBackend()

        def connect_tcp(
            self,
            host: str,
            port: int,
            timeout: float | None = None,
            local_address: str | None = None,
            socket_options: Iterable[Any] | None = None,
        ) -> httpcore.NetworkStream:
            addresses = pins.addresses(host, port)
            if not addresses:
                raise httpcore.ConnectError(
                    f"{host}:{port} was not checked by the SSRF guard; not connecting"
                )
            last: Exception | None = None
            for address in addresses:
                try:
                    return self._inner.connect_tcp(address, port, timeout, local_address, socket_options)
                except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                    last = exc
            assert last is not None  # addresses is not empty, so every attempt failed with an error
            raise last

        def connect_unix_socket(self, *args: Any, **kwargs: Any) -> httpcore.NetworkStream:
            raise httpcore.ConnectError("unix sockets are never used")

        def sleep(self, seconds: float) -> None:
            self._inner.sleep(seconds)

    def _mapped(exc: Exception, request: httpx.Request) -> Exception:
        cls = getattr(httpx, type(exc).__name__, None)
        if not (isinstance(cls, type) and issubclass(cls, httpx.TransportError)):
            cls = httpx.TransportError
        return cls(str(exc), request=request)

    class Stream(httpx.SyncByteStream):
        def __init__(self, inner: Iterable[bytes], request: httpx.Request) -> None:
            self._inner = inner
            self._request = request

        def __iter__(self) -> Iterator[bytes]:
            try:
                yield from self._inner
            except httpcore.TimeoutException as exc:
                raise _mapped(exc, self._request) from exc
            except (httpcore.NetworkError, httpcore.ProtocolError) as exc:
                raise _mapped(exc, self._request) from exc

        def close(self) -> None:
            if hasattr(self._inner, "close"):
                self._inner.close()

    class PinnedTransport(httpx.BaseTransport):
        def __init__(self) -> None:
            self._pool = httpcore.ConnectionPool(
                ssl_context=_ssl_context(),
                max_connections=100,
                max_keepalive_connections=20,
                keepalive_expiry=5.0,
                network_backend=PinnedBackend(),
            )

        def handle_request(self, request: httpx.Request) -> httpx.Response:
            core_request = httpcore.Request(
                method=request.method,
                url=httpcore.URL(
                    scheme=request.url.raw_scheme,
                    host=request.url.raw_host,
                    port=request.url.port,
                    target=request.url.raw_path,
                ),
                headers=request.headers.raw,
                content=request.stream,
                extensions=request.extensions,
            )
            try:
                response = self._pool.handle_request(core_request)
            except (
                httpcore.TimeoutException,
                httpcore.NetworkError,
                httpcore.ProtocolError,
                httpcore.UnsupportedProtocol,
            ) as exc:
                raise _mapped(exc, request) from exc
            # A sync pool's body is a sync iterable; httpx's own HTTPTransport asserts the same.
            assert isinstance(response.stream, Iterable)
            return httpx.Response(
                status_code=response.status,
                headers=response.headers,
                stream=Stream(response.stream, request),
                extensions=response.extensions,
            )

        def close(self) -> None:
            self._pool.close()

    return PinnedTransport()
