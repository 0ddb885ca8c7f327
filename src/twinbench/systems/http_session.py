"""The connection pool of one HTTP client: an aiohttp session with room for `concurrency`
connections, sending to URLs and through proxies exactly as the httpx client before it did.

aiohttp, not httpx, by measurement (docs/systems.md): about 0.35 ms of client CPU per call
against httpx's 2.4-3.3 ms, and one pool of 256 connections with no slowdown (an httpx pool
slows sharply past a few dozen: httpx issue #3215).
"""

from __future__ import annotations

import base64
import functools
import ssl
import urllib.request
from urllib.parse import urlsplit

import aiohttp
import httpx
from yarl import URL

from twinbench.systems.base import SystemOptions
from twinbench.systems.endpoint import Endpoint


def open_session(options: SystemOptions, endpoint: Endpoint) -> aiohttp.ClientSession:
    """A session for `endpoint` (call it on the loop that will use it)."""
    headers = {"Content-Type": "application/json", **endpoint.headers}
    if endpoint.auth is not None:
        headers["Authorization"] = basic_auth(*endpoint.auth)
    connector = aiohttp.TCPConnector(
        limit=options.concurrency, limit_per_host=0, ssl=_tls(endpoint.origin)
    )
    return aiohttp.ClientSession(
        connector=connector,
        headers=headers,
        timeout=aiohttp.ClientTimeout(total=None),  # the call's own deadline bounds it all
        auto_decompress=False,  # http_reply decodes, bounded by the read cap
        cookie_jar=aiohttp.DummyCookieJar(),  # every call stands alone
    )


def basic_auth(user: str, password: str) -> str:
    """The HTTP Basic `Authorization` value (UTF-8, as httpx and `endpoint`'s redaction)."""
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


@functools.lru_cache(maxsize=64)
def wire_url(url: str) -> URL:
    """`url` as sent: normalised as httpx does (IDNA host, non-ASCII percent-encoded), and its
    escapes kept (yarl's own parsing would turn a query's `%2F` into `/`)."""
    return URL(str(httpx.URL(url)), encoded=True)


def proxy_for(url: str) -> str | None:
    """The proxy HTTP_PROXY / HTTPS_PROXY / ALL_PROXY name for `url`, unless NO_PROXY exempts
    its host (as httpx's trust_env read them; aiohttp's own would also read ~/.netrc)."""
    parts = urlsplit(url)
    proxies = urllib.request.getproxies_environment()
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    # with proxies in the environment, proxy_bypass reads NO_PROXY (not the system settings)
    if proxy is None or urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    return proxy


def _tls(origin: str) -> ssl.SSLContext | bool:
    """httpx's certificate store (certifi, or SSL_CERT_FILE / SSL_CERT_DIR) for https."""
    return httpx.create_ssl_context() if origin.startswith("https:") else True
