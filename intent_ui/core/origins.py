"""Which web pages may drive the app: origins as a browser writes them, and the app's own.

A browser names the page behind every websocket handshake and every cross-origin request
in `Origin` (`scheme://host[:port]`, lower case, without the scheme's default port); a
page cannot change it. The app's own page is where its frontend is served (Reflex's
`deploy_url`, and the frontend port on this machine under each spelling of loopback);
anything else has to be listed. The names are fixed on purpose: accepting whatever host
a request says it was sent to would let a page on a domain that resolves to 127.0.0.1
(DNS rebinding) in.

Pure: strings in, strings out.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

__all__ = ["allowed_origins", "frontend_origins", "is_allowed", "normalize_origin"]

_DEFAULT_PORTS = {"http": 80, "https": 443}
_LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")
_EXAMPLE = "e.g. https://chat.example.com or http://localhost:3000"


def normalize_origin(text: str) -> str:
    """`text` as a browser would send it in `Origin`; ValueError says what is wrong."""
    raw = text.strip()
    if raw == "*":
        raise ValueError(
            f"'*' would let every web page drive the app; list each origin instead, {_EXAMPLE}"
        )
    try:
        parts = urlsplit(raw.rstrip("/"))
        port = parts.port
    except ValueError:
        raise ValueError(f"'{text}' is not an origin, {_EXAMPLE}") from None
    if parts.scheme.lower() not in _DEFAULT_PORTS or not parts.hostname:
        raise ValueError(f"'{text}' is not an http:// or https:// origin, {_EXAMPLE}")
    if parts.path or parts.query or parts.fragment or "@" in parts.netloc:
        raise ValueError(
            f"'{text}' is more than an origin: write only scheme://host[:port] (no path, "
            f"user or query), {_EXAMPLE}"
        )
    scheme = parts.scheme.lower()
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    if port is None or port == _DEFAULT_PORTS[scheme]:
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


def frontend_origins(deploy_url: str | None, frontend_port: int | None) -> frozenset[str]:
    """The origins of the app's own page: `deploy_url`'s origin, and `http://` on
    `frontend_port` of this machine (localhost, 127.0.0.1, [::1]). A loopback
    `deploy_url` counts under all three spellings, since a user may type any of them."""
    origins: set[str] = set()
    if frontend_port:
        origins.update(f"http://{host}:{frontend_port}" for host in _LOOPBACK_HOSTS)
    if deploy_url:
        try:
            parts = urlsplit(deploy_url)
            origin = normalize_origin(f"{parts.scheme}://{parts.netloc}")
        except ValueError:
            return frozenset(origins)  # not a URL a page can be served from
        origins.add(origin)
        scheme, _, rest = origin.partition("://")
        host, port = _split_host_port(rest)
        if host in _LOOPBACK_HOSTS:
            origins.update(f"{scheme}://{other}{port}" for other in _LOOPBACK_HOSTS)
    return frozenset(origins)


def allowed_origins(
    configured: Iterable[str], deploy_url: str | None, frontend_port: int | None
) -> frozenset[str]:
    """The configured origins (already normalised) and the app's own page."""
    return frozenset(configured) | frontend_origins(deploy_url, frontend_port)


def is_allowed(origin: str, allowed: frozenset[str]) -> bool:
    """Whether a request's `Origin` is one of `allowed` (`null`, sent by sandboxed and
    local-file pages, never is)."""
    try:
        return normalize_origin(origin) in allowed
    except ValueError:
        return False


def _split_host_port(rest: str) -> tuple[str, str]:
    """`host[:port]` as (host, ':port' or '')."""
    if rest.startswith("["):
        end = rest.index("]") + 1
        return rest[:end], rest[end:]
    host, colon, port = rest.partition(":")
    return host, f"{colon}{port}"
