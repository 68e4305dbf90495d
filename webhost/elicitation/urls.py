"""Judges whether a URL-mode elicitation link may be opened, and says what about it could mislead a person."""

from __future__ import annotations

import dataclasses
import ipaddress
import unicodedata
from dataclasses import dataclass, field

import idna

MAX_URL_LENGTH = 16_384
OPENABLE_SCHEMES = ("http", "https")
DEFAULT_PORTS = {"http": 80, "https": 443}
# Script pairs browsers accept inside one label (Chromium's IDN policy); any other mix is a spoofing sign.
_ALLOWED_MIXES = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
)
_HOST_ASCII = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_")
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.")


@dataclass
class UrlReport:
    url: str  # the link as it will be shown and opened: trimmed of surrounding whitespace
    scheme: str = ""
    host: str = ""  # the ASCII (punycode) host the browser will contact; IPv6 without brackets
    host_unicode: str = ""  # the same host as a person would read it
    port: int | None = None
    openable: bool = False
    warnings: list[str] = field(default_factory=list)
    error: str | None = None

    def as_dict(self) -> dict[str, object]:
        return dataclasses.asdict(self)


def _trim(url: str) -> str:
    # Browsers strip leading and trailing C0 controls and spaces; so do we, so the shown URL is the real one.
    return url.strip("".join(map(chr, range(0x21))))


def _host_span(text: str) -> tuple[int, int] | None:
    """Where the host sits in `scheme://userinfo@host:port/…`, using the browser's split (last @ wins)."""
    colon = text.find(":")
    if colon <= 0 or not text.startswith("//", colon + 1):
        return None
    start = colon + 3
    end = min((i for i in (text.find(c, start) for c in "/?#") if i >= 0), default=len(text))
    at = text.rfind("@", start, end)
    host_start = at + 1 if at >= 0 else start
    if text.startswith("[", host_start):
        close = text.find("]", host_start, end)
        return host_start, (close + 1 if close >= 0 else end)
    port = text.find(":", host_start, end)
    return host_start, (port if port >= 0 else end)


def highlight_parts(url: str) -> dict[str, str]:
    """Splits the (trimmed) URL so before + host + after is exactly `inspect_url(url).url`."""
    text = _trim(url) if isinstance(url, str) else ""
    span = _host_span(text)
    if span is None:
        return {"before": text, "host": "", "after": ""}
    return {"before": text[: span[0]], "host": text[span[0] : span[1]], "after": text[span[1] :]}


def _ipv4_number(part: str) -> int | None:
    """One dotted part as WHATWG reads it: decimal, 0x-hex or 0-octal (so 0177 is 127)."""
    base = 10
    if part[:2] in ("0x", "0X"):
        part, base = part[2:], 16
    elif len(part) > 1 and part[0] == "0":
        part, base = part[1:], 8
    digits = "0123456789abcdefABCDEF"[: 10 if base == 10 else (8 if base == 8 else 22)]
    if not set(part) <= set(digits) or len(part) > 32:
        return None
    return int(part, base) if part else 0


def _ipv4(host: str) -> ipaddress.IPv4Address | None | bool:
    """The address a numeric-looking host means; False if it is not numeric, None if it is but invalid."""
    parts = host.split(".")
    if len(parts) > 1 and parts[-1] == "":
        parts.pop()
    last = parts[-1]
    if not (last and (last.isascii() and last.isdigit() or _ipv4_number(last) is not None)):
        return False
    numbers = [_ipv4_number(part) if part else None for part in parts]
    if len(numbers) > 4 or any(n is None for n in numbers):
        return None
    values = [n for n in numbers if n is not None]
    if any(n > 255 for n in values[:-1]) or values[-1] >= 256 ** (5 - len(values)):
        return None
    return ipaddress.IPv4Address(sum(n << (8 * (3 - i)) for i, n in enumerate(values[:-1])) + values[-1])


def _script(ch: str) -> str | None:
    if not unicodedata.category(ch).startswith("L"):
        return None  # digits, hyphens and combining marks belong to no script here
    if ch.isascii():
        return "LATIN"
    word = unicodedata.name(ch, "UNKNOWN").split(" ", 1)[0]
    return {"CJK": "HAN", "MODIFIER": None}.get(word, word)


def _mixed_scripts(label: str) -> list[str]:
    scripts = {s for s in map(_script, label) if s is not None}
    if len(scripts) < 2 or any(scripts <= allowed for allowed in _ALLOWED_MIXES):
        return []
    return sorted(scripts)


def _domain(host: str, report: UrlReport) -> str | None:
    """Fills the ASCII and Unicode host; returns an error if a browser would refuse it too."""
    try:
        # UTS 46 mapping is what the browser applies: case folding, full-width forms, ideographic dots.
        mapped = idna.uts46_remap(host, std3_rules=False, transitional=False)
    except (idna.IDNAError, ValueError):
        return "the host is not a valid domain name"
    address = _ipv4(mapped)
    if address is None:
        return "the host looks like a number but is not a valid IP address"
    if isinstance(address, ipaddress.IPv4Address):
        report.host = report.host_unicode = str(address)
        report.warnings.append(f"points to the IP address {address} instead of a domain name")
        if host.rstrip(".") != str(address):
            report.warnings.append("writes the IP address in an unusual form that hides what it is")
        return None
    labels = mapped.split(".")
    ascii_labels, unicode_labels = [], []
    for index, label in enumerate(labels):
        if label == "" and not (index == len(labels) - 1 and index > 0):
            return "the host has an empty part"
        try:
            ascii_label = idna.alabel(label).decode() if not label.isascii() else label
            unicode_label = idna.ulabel(label) if label.startswith("xn--") else label
        except (idna.IDNAError, UnicodeError):
            return "the host is not a valid internationalised domain name"
        if not set(ascii_label) <= _HOST_ASCII:
            return "the host contains characters a domain name cannot have"
        ascii_labels.append(ascii_label)
        unicode_labels.append(unicode_label)
        if mix := _mixed_scripts(unicode_label):
            report.warnings.append(
                f"mixes {' and '.join(s.title() for s in mix)} letters in one part of the domain, "
                "a common way to imitate another site"
            )
    report.host, report.host_unicode = ".".join(ascii_labels), ".".join(unicode_labels)
    if report.host != report.host_unicode:
        report.warnings.append(
            f"uses an internationalised domain name: it reads as {report.host_unicode} "
            f"but is really {report.host}; make sure that is the site you expect"
        )
    if report.host == "localhost" or report.host.endswith(".localhost"):
        report.warnings.append("points to this computer (localhost)")
    return None


def _inspect(text: str, report: UrlReport) -> str | None:
    if not text:
        return "the link is empty"
    if len(text) > MAX_URL_LENGTH:
        return f"the link is longer than {MAX_URL_LENGTH} characters"
    if any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in text):
        return "the link contains spaces or control characters, which browsers silently drop"
    if "\\" in text:
        return "the link contains a backslash, which browsers read as a slash"
    scheme, colon, rest = text.partition(":")
    if not colon or not scheme or not scheme[0].isalpha() or not set(scheme) <= _SCHEME_CHARS:
        return "the link has no scheme such as https:"
    report.scheme = scheme.lower()
    if report.scheme not in OPENABLE_SCHEMES:
        return "only http and https links can be opened"
    span = _host_span(text)
    if span is None or not rest.startswith("//"):
        return "the link must start with http:// or https://"
    host = text[span[0] : span[1]]
    authority_end = min((i for i in (text.find(c, span[1]) for c in "/?#") if i >= 0), default=len(text))
    port_text = text[span[1] : authority_end]
    if port_text and not (
        port_text[0] == ":" and port_text[1:].isascii() and port_text[1:].isdigit() or port_text == ":"
    ):
        return "the port is not a number"
    if port_text[1:]:
        if len(port_text) > 6 or int(port_text[1:]) > 65535:
            return "the port is out of range"
        report.port = int(port_text[1:])
    if not host:
        return "the link has no host"
    if "%" in host:
        return "the host contains percent-encoding, which hides its real name"
    if host.startswith("["):
        try:
            address = ipaddress.IPv6Address(host[1:-1] if host.endswith("]") and "%" not in host else "-")
        except ValueError:
            return "the host is not a valid IPv6 address"
        report.host = report.host_unicode = address.compressed
        report.warnings.append(f"points to the IP address {address.compressed} instead of a domain name")
    elif error := _domain(host, report):
        return error
    if "@" in text[: span[0]]:
        report.warnings.append("contains a user name or password before @, which can disguise the real site")
    if report.scheme == "http":
        report.warnings.append("uses plain http, so the connection is not encrypted")
    if report.port is not None and report.port != DEFAULT_PORTS[report.scheme]:
        report.warnings.append(f"uses the unusual port {report.port}")
    try:
        ip = ipaddress.ip_address(report.host)
    except ValueError:
        return None
    if ip.is_loopback or ip.is_private or ip.is_link_local or ip.is_unspecified:
        report.warnings.append("points to this computer or a private network")
    return None


def inspect_url(url: str) -> UrlReport:
    """Never raises: garbage yields openable=False with an error, and whatever parts could be read."""
    if not isinstance(url, str):
        return UrlReport(url="", error="the link is not text")
    report = UrlReport(url=_trim(url))
    try:
        report.error = _inspect(report.url, report)
    except Exception:  # defensive: a parser surprise must refuse the link, never break the page
        report.error = "the link could not be understood"
    report.openable = report.error is None
    return report
