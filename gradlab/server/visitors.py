"""Who a request comes from: a *visitor* is a client address plus, where present, its browser.

A visitor with ten tabs is one visitor, not ten: the worker pool admits long work
per visitor (:mod:`gradlab.server.lanes`), page script runs take turns per visitor
(:mod:`gradlab.ui.visitor_turns`) and ``serve.py`` caps sessions per address
(:mod:`gradlab.server.edge`). Two facts identify a visitor:

* the **client address**: the TCP peer, or, when the peer is a load balancer named
  in ``GRADLAB_TRUSTED_PROXIES`` (addresses or networks, comma-separated), the
  address that balancer appended to ``X-Forwarded-For``. A header from anyone else
  is ignored: any client can write one;
* the **browser**: the token inside Streamlit's ``_streamlit_xsrf`` cookie, which
  every tab of one browser shares (the cookie is re-masked on each response; the
  token under the mask stays). It separates the students of a class behind one
  school NAT address. A script may send any cookie or none: that only changes which
  of its own requests share a turn, never another address's place.

>>> client_address("127.0.0.2", "6.6.6.6")  # the header of an untrusted peer is ignored
'127.0.0.2'
>>> client_address("10.0.0.5", "6.6.6.6, 203.0.113.7", trusted=parse_networks("10.0.0.0/8"))
'203.0.113.7'
>>> browser_token("2|01020304|0b0b0b0b|1700000000") == browser_token("2|00000000|0a09080f|1")
True
>>> Visitor("203.0.113.7", "ab").address
'203.0.113.7'
"""

from __future__ import annotations

import binascii
import hashlib
import ipaddress
import os
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["Visitor", "TRUSTED_PROXIES_ENV", "XSRF_COOKIE", "LOCAL", "client_address", "browser_token",
           "parse_networks", "trusted_proxies", "visitor_from"]

#: The environment variable naming the load balancers whose ``X-Forwarded-For`` is believed.
TRUSTED_PROXIES_ENV = "GRADLAB_TRUSTED_PROXIES"
#: Streamlit's XSRF cookie: one per browser, shared by its tabs.
XSRF_COOKIE = "_streamlit_xsrf"
#: The address of a visitor on this machine when the peer is not known (Streamlit's
#: ``st.context.ip_address`` is None for 127.0.0.1 and ::1).
LOCAL = "127.0.0.1"

_Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class Visitor:
    """One client: its address and its browser's token ("" when it sent none)."""

    address: str
    browser: str = ""


def parse_networks(text: str) -> tuple[_Network, ...]:
    """Addresses and networks written ``"127.0.0.1, 10.0.0.0/8, ::1"``; a bad entry is skipped.

    >>> [str(n) for n in parse_networks("127.0.0.1, 10.0.0.0/8, nonsense")]
    ['127.0.0.1/32', '10.0.0.0/8']
    """
    networks = []
    for part in (text or "").split(","):
        try:
            networks.append(ipaddress.ip_network(part.strip(), strict=False))
        except ValueError:
            continue
    return tuple(networks)


@lru_cache(maxsize=1)
def _trusted_from(text: str) -> tuple[_Network, ...]:
    return parse_networks(text)


def trusted_proxies() -> tuple[_Network, ...]:
    """The networks of ``GRADLAB_TRUSTED_PROXIES`` (none by default: every peer is a client)."""
    return _trusted_from(os.environ.get(TRUSTED_PROXIES_ENV, ""))


def _is_trusted(address: str, trusted: tuple[_Network, ...]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in trusted)


def client_address(peer: str | None, forwarded_for: str | None, trusted: tuple[_Network, ...] | None = None) -> str:
    """The client's address: ``peer``, or, while the hop is a trusted balancer, the address it
    appended to ``X-Forwarded-For`` (read from the right: what a client wrote itself stands left
    of what the balancer appended). ``peer`` None is :data:`LOCAL`."""
    trusted = trusted_proxies() if trusted is None else trusted
    address = peer or LOCAL
    hops = [hop.strip() for hop in (forwarded_for or "").split(",") if hop.strip()]
    while hops and _is_trusted(address, trusted):
        candidate = hops.pop()
        try:
            address = str(ipaddress.ip_address(candidate))
        except ValueError:
            break  # a garbled hop: the last trusted peer stands for the client
    return address


def browser_token(cookie: str | None) -> str:
    """A short stable id of the browser behind a ``_streamlit_xsrf`` cookie ("" without one).

    The cookie is ``2|mask|masked_token|timestamp`` (the token XOR the repeated 4-byte
    mask; Tornado's format, which Streamlit kept); the token is the same for every
    tab of a browser while the mask changes. An unreadable cookie is hashed whole.
    """
    if not cookie:
        return ""
    value = cookie.strip("\"'")
    parts = value.split("|")
    token = value.encode()
    if len(parts) == 4 and parts[0] == "2":
        try:
            mask, masked = binascii.a2b_hex(parts[1]), binascii.a2b_hex(parts[2])
            if len(mask) == 4:
                token = bytes(b ^ mask[i % 4] for i, b in enumerate(masked))
        except (binascii.Error, ValueError):
            pass
    return hashlib.blake2b(token, digest_size=8).hexdigest()


def visitor_from(peer: str | None, headers, cookies) -> Visitor:
    """The visitor of a request or websocket: ``headers`` and ``cookies`` are mappings
    (case-insensitive headers, as Streamlit's ``st.context.headers`` and Starlette's are).

    >>> visitor_from("127.0.0.3", {}, {}).address
    '127.0.0.3'
    """
    forwarded = headers.get("X-Forwarded-For") if headers is not None else None
    cookie = cookies.get(XSRF_COOKIE) if cookies is not None else None
    return Visitor(client_address(peer, forwarded), browser_token(cookie))
