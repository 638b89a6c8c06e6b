"""What a browser does over plain HTTP before it opens the websocket: load the page's HTML, keep
the cookies the answer sets, note the replica that answered.

Behind a load balancer with sticky sessions (``deploy/haproxy.cfg``) a tab belongs to a
browser: its tabs share one cookie jar (a dict), and the page load is where HAProxy sets its
affinity cookie; the websocket then carries it.
"""

from __future__ import annotations

import functools
import http.client
import urllib.request
from http.cookies import SimpleCookie

#: Response header in which deploy/haproxy.cfg names the replica that answered.
REPLICA_HEADER = "X-GradLab-Replica"


def remember_cookies(cookies: dict[str, str] | None, set_cookie_headers: list[str]) -> None:
    """Store what ``Set-Cookie`` headers set in ``cookies`` (name -> value), as a browser does.

    >>> jar = {}
    >>> remember_cookies(jar, ["GRADLAB_REPLICA=ab12; path=/; HttpOnly", "x=1"])
    >>> jar
    {'GRADLAB_REPLICA': 'ab12', 'x': '1'}
    """
    if cookies is None:
        return
    for header in set_cookie_headers:
        parsed: SimpleCookie = SimpleCookie()
        try:
            parsed.load(header)
        except Exception:  # noqa: BLE001 - a cookie Python cannot parse is not ours
            continue
        cookies.update({name: morsel.value for name, morsel in parsed.items()})


def cookie_header(cookies: dict[str, str] | None) -> str:
    """The ``Cookie`` header a browser with ``cookies`` sends.

    >>> cookie_header({"GRADLAB_REPLICA": "ab12", "x": "1"}), cookie_header(None)
    ('GRADLAB_REPLICA=ab12; x=1', '')
    """
    return "; ".join(f"{k}={v}" for k, v in (cookies or {}).items())


class _SourceHandler(urllib.request.HTTPHandler):
    """urllib's HTTP handler with connections from a given local address (another loopback client)."""

    def __init__(self, source: str) -> None:
        super().__init__()
        self.source = source

    def http_open(self, req):
        return self.do_open(functools.partial(http.client.HTTPConnection, source_address=(self.source, 0)), req)


def get_page(url: str, cookies: dict[str, str] | None, source: str | None,
             timeout: float) -> tuple[list[str], str]:
    """GET ``url`` with the browser's cookies, from the local address ``source`` (None: any):
    the ``Set-Cookie`` headers of the answer, and the replica that answered ('' without a
    load balancer). Blocking: an async caller runs it in a thread."""
    cookie = cookie_header(cookies)
    request = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    opener = urllib.request.build_opener(_SourceHandler(source)) if source else None
    with (opener.open if opener else urllib.request.urlopen)(request, timeout=timeout) as response:
        response.read()
        return response.headers.get_all("Set-Cookie") or [], response.headers.get(REPLICA_HEADER, "")
