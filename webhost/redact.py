"""Secrets out of what webhost builds for the browser and its logs: `***` in place of each known secret value.

The configuration knows which values are secret (every `${VAR}` and `${input:ID}` expansion, header
values, a URL's password and query values: `ServerConfig.secret_values`); a `Redactor` holding them is
applied where webhost builds text from the configuration: a server's target, its connect errors, its
own stderr and log lines (with that server's own secrets only), the audit export. Never to what a
server sends by itself, which would tell a hostile server which of its guesses are secrets
(docs/security.md, "Secrets"). URLs are also masked by shape (`redact_url`), so a literal password or
query value never shows even when it was not expanded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from urllib.parse import parse_qsl, quote, unquote, unquote_plus, urlsplit, urlunsplit

from webhost import jsontext

MASK = "***"
# Shorter values are not treated as secrets: masking "1" or "on" in every string would garble
# everything the page shows, and such a value protects nothing.
MIN_SECRET = 4


def secret_forms(value: str) -> set[str]:
    """The forms a secret value shows up in: as is, stripped, the credential after an auth scheme
    ("Bearer X" → X), percent-encoded and percent-decoded."""
    forms = {value, value.strip()}
    scheme, _, credential = value.strip().partition(" ")
    if credential and scheme.isalpha():
        forms.add(credential.strip())
    forms |= {quote(form, safe="") for form in list(forms)} | {unquote(form) for form in list(forms)}
    return {form for form in forms if len(form) >= MIN_SECRET}


def redact_url(url: str) -> str:
    """A URL with its userinfo and every query value masked (`https://***@host/mcp?key=***`)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return MASK
    netloc = parts.netloc
    if "@" in netloc:
        netloc = MASK + "@" + netloc.rpartition("@")[2]
    query = parts.query
    if query:
        query = "&".join(pair.partition("=")[0] + "=" + MASK if "=" in pair else MASK for pair in query.split("&"))
    return urlunsplit((parts.scheme, netloc, parts.path, query, MASK if parts.fragment else ""))


# A query starts at `?`, or at an encoded `?` (`%3F`, `%253F`, ...) that a client put in the path.
_QUERY = re.compile(r"(\?|%(?:25)*3[fF])([^\s\"#]*)")
_ENCODED_EQUALS = re.compile(r"%(?:25)*3[dD]")
_DECODINGS = 4  # `%25` nested deeper than this is not decoded further; such a pair is masked whole


def fully_decoded(text: str) -> str:
    """The text percent-decoded (and `+` as space) until it no longer changes, a few times at most."""
    for _ in range(_DECODINGS):
        once = unquote_plus(text)
        if once == text:
            break
        text = once
    return text


def mask_query_parameters(text: str, names: frozenset[str]) -> str:
    """Every query (`?a=1&b=2`) in the text with the values of the parameters named `names` masked.

    A pair is read decoded, however often and wherever it was encoded, and its name case-folded: `?tok%65n=`
    is `token` to starlette, `?TOKEN=` carries the token's value though it is not accepted as a login, and
    `?token%3DX` (the `=` encoded, a 401) or `?a=1%26token%3DX` still carry it once decoded. Such a pair keeps
    its raw name up to its first `=` (literal or encoded) and loses the rest."""

    def carries(raw: str) -> bool:
        for part in re.split(r"[&?;]", fully_decoded(raw)):
            name, equals, _ = part.partition("=")
            if equals and name.strip().casefold() in names:
                return True
        return False

    def one(pair: str) -> str:
        if not carries(pair):
            return pair
        name, equals, _ = pair.partition("=")
        if equals and "=" not in fully_decoded(name):
            return name + "=" + MASK
        encoded = _ENCODED_EQUALS.search(name)
        return name[: encoded.end()] + MASK if encoded else MASK

    return _QUERY.sub(lambda m: m.group(1) + "&".join(one(pair) for pair in m.group(2).split("&")), text)


def url_secrets(url: str) -> set[str]:
    """The password (and user name) and the query values of a URL."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return set()
    found: set[str] = set()
    if "@" in parts.netloc:
        userinfo = parts.netloc.rpartition("@")[0]
        found |= {userinfo, *userinfo.split(":", 1)}
    found |= {value for _, value in parse_qsl(parts.query, keep_blank_values=False)}
    found |= {pair.partition("=")[2] or pair for pair in parts.query.split("&")}
    return {value for value in found if value}


class Redactor:
    """Replaces known secret values (longest first) with `***` in text and in JSON values."""

    def __init__(self, values: Iterable[str] = ()) -> None:
        self.values = tuple(values)
        forms: set[str] = set()
        for value in self.values:
            forms |= secret_forms(value)
        self._values = sorted(forms, key=len, reverse=True)
        # The same values as they appear inside JSON text (escaped), to spot them without decoding.
        self._in_json = sorted({json.dumps(v)[1:-1] for v in self._values} | set(self._values), key=len, reverse=True)

    def with_values(self, values: Iterable[str]) -> Redactor:
        """This redactor with more secret values."""
        return Redactor((*self.values, *values))

    def __bool__(self) -> bool:
        return bool(self._values)

    def text(self, text: str) -> str:
        for value in self._values:
            if value in text:
                text = text.replace(value, MASK)
        return text

    def value(self, value: object) -> object:
        """A JSON value with every string (keys included) redacted; the structure is untouched."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(k) if isinstance(k, str) else k: self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(v) for v in value]
        return value

    def json_text(self, text: str) -> str:
        """A JSON document with every string redacted; unchanged (and not decoded) when it holds no secret."""
        if not any(value in text for value in self._in_json):
            return text
        try:
            decoded = json.loads(text)
        except ValueError:
            return self.text(text)
        return jsontext.dumps(self.value(decoded))
