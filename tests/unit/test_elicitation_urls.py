"""Unit tests for webhost.elicitation.urls: URL-mode link safety checks and host highlighting."""

from __future__ import annotations

import random

import pytest

from webhost.elicitation.urls import MAX_URL_LENGTH, UrlReport, highlight_parts, inspect_url


def warned(report: UrlReport, fragment: str) -> bool:
    return any(fragment in warning for warning in report.warnings)


def test_a_plain_https_link_is_openable_with_no_warnings() -> None:
    report = inspect_url("https://mcp.example.com/ui/set_api_key?x=1#top")
    assert report == UrlReport(
        url="https://mcp.example.com/ui/set_api_key?x=1#top",
        scheme="https",
        host="mcp.example.com",
        host_unicode="mcp.example.com",
        port=None,
        openable=True,
        warnings=[],
        error=None,
    )


def test_the_report_turns_into_a_plain_dict_for_json() -> None:
    assert inspect_url("https://a.example/").as_dict() == {
        "url": "https://a.example/",
        "scheme": "https",
        "host": "a.example",
        "host_unicode": "a.example",
        "port": None,
        "openable": True,
        "warnings": [],
        "error": None,
    }


def test_a_plain_http_link_is_openable_but_warns_that_it_is_not_encrypted() -> None:
    report = inspect_url("http://example.com/")
    assert report.openable and warned(report, "plain http")


def test_scheme_and_host_case_are_normalised() -> None:
    report = inspect_url("HTTPS://EXAMPLE.Com/Path")
    assert (report.scheme, report.host, report.openable, report.warnings) == ("https", "example.com", True, [])


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        "javascript://example.com/%0aalert(1)",
        "data:text/html,<script>alert(1)</script>",
        "file:///etc/passwd",
        "ftp://example.com/",
        "vbscript:msgbox",
        "about:blank",
        "blob:https://example.com/uuid",
        "ws://example.com/",
        "mailto:a@example.com",
        "chrome://settings",
        "intent://x#Intent;end",
    ],
)
def test_links_that_are_not_http_or_https_are_never_openable(url: str) -> None:
    report = inspect_url(url)
    assert not report.openable
    assert report.error == "only http and https links can be opened"


@pytest.mark.parametrize(
    ("url", "error"),
    [
        ("", "empty"),
        ("   \t\n", "empty"),
        ("example.com", "no scheme"),
        ("//example.com/x", "no scheme"),
        ("1https://x.com", "no scheme"),
        ("https:example.com", "must start with http:// or https://"),
        ("https:/example.com", "must start with http:// or https://"),
        ("https://", "no host"),
        ("https:///path", "no host"),
        ("https://user@:443/", "no host"),
        ("https://exa mple.com/", "spaces or control characters"),
        ("java\tscript:alert(1)", "spaces or control characters"),
        ("https://exa\x00mple.com/", "spaces or control characters"),
        ("https://example.com/\x7f/x", "spaces or control characters"),
        ("https://evil.example\\@good.example/", "backslash"),
        ("https://%65vil.example/", "percent-encoding"),
        ("https://a.com:http/", "port is not a number"),
        ("https://a.com:-1/", "port is not a number"),
        ("https://a.com:65536/", "out of range"),
        ("https://a.com:" + "9" * 5000 + "/", "out of range"),
        ("https://a..com/", "empty part"),
        ("https://.a.com/", "empty part"),
        ("https://[::1/", "not a valid IPv6"),
        ("https://[not-an-ip]/", "not a valid IPv6"),
        ("https://[::1]x/", "port is not a number"),
        ("https://999.1.1.1/", "not a valid IP address"),
        ("https://1.2.3.4.5/", "not a valid IP address"),
        ("https://0x100000000/", "not a valid IP address"),
        ("https://09.1.1.1/", "not a valid IP address"),
        ("https://a.1/", "not a valid IP address"),
        ("https://xn--zz.com/", "internationalised domain"),
        ("https://exa<mple.com/", "cannot have"),
        ("https://a.com" + "/x" * MAX_URL_LENGTH, "longer than"),
    ],
)
def test_malformed_links_are_refused_with_a_reason(url: str, error: str) -> None:
    report = inspect_url(url)
    assert not report.openable
    assert report.error is not None and error in report.error, report.error


def test_surrounding_whitespace_is_trimmed_from_the_link_that_is_shown_and_opened() -> None:
    report = inspect_url("  \n https://example.com/x \t")
    assert report.openable and report.url == "https://example.com/x"


@pytest.mark.parametrize(
    "url", ["https://user:pass@example.com/", "https://user@example.com/", "https://@example.com/"]
)
def test_embedded_credentials_are_warned_about(url: str) -> None:
    report = inspect_url(url)
    assert report.openable and report.host == "example.com" and warned(report, "user name or password")


def test_the_real_host_is_the_part_after_the_last_at_sign() -> None:
    report = inspect_url("https://trusted.example.com:443@evil.example/login")
    assert (report.host, report.port) == ("evil.example", None)
    assert warned(report, "user name or password")


@pytest.mark.parametrize(
    "url",
    [
        "https://evil.example#@trusted.example",
        "https://evil.example?@trusted.example",
        "https://evil.example/@trusted.example",
    ],
)
def test_an_at_sign_after_the_host_is_not_mistaken_for_credentials(url: str) -> None:
    report = inspect_url(url)
    assert report.host == "evil.example" and not warned(report, "user name")


def test_a_punycode_host_is_decoded_for_display_and_warned_about() -> None:
    report = inspect_url("https://xn--pple-43d.com/")
    assert (report.host, report.host_unicode) == ("xn--pple-43d.com", "аpple.com")
    assert warned(report, "reads as аpple.com but is really xn--pple-43d.com")


def test_a_unicode_host_is_encoded_to_the_punycode_the_browser_will_contact() -> None:
    report = inspect_url("https://аpple.com/")
    assert (report.host, report.host_unicode, report.openable) == ("xn--pple-43d.com", "аpple.com", True)


def test_latin_mixed_with_cyrillic_in_one_label_is_warned_as_spoofing() -> None:
    report = inspect_url("https://pаypal.com/")  # the second letter is CYRILLIC SMALL LETTER A
    assert warned(report, "mixes Cyrillic and Latin letters")


def test_latin_mixed_with_greek_in_one_label_is_warned_as_spoofing() -> None:
    assert warned(inspect_url("https://gοogle.com/"), "mixes Greek and Latin letters")  # GREEK SMALL OMICRON


def test_scripts_in_different_labels_are_not_a_mix() -> None:
    report = inspect_url("https://пример.example.com/")
    assert not warned(report, "mixes") and warned(report, "internationalised domain name")


@pytest.mark.parametrize(
    "host",
    [
        "日本語テキスト.jp",
        "ひらがなカタカナ漢字.jp",
        "한국어漢字.kr",
        "münchen.de",
        "straße.de",
    ],
)
def test_legitimate_script_combinations_are_not_flagged_as_mixed(host: str) -> None:
    report = inspect_url(f"https://{host}/")
    assert report.openable and not warned(report, "mixes"), report


def test_full_width_letters_and_ideographic_dots_are_mapped_as_the_browser_does() -> None:
    report = inspect_url("https://ｅｘａｍｐｌｅ。com/")
    assert (report.host, report.openable) == ("example.com", True)


@pytest.mark.parametrize(
    ("url", "address"),
    [
        ("http://127.0.0.1/", "127.0.0.1"),
        ("https://93.184.216.34/", "93.184.216.34"),
        ("http://2130706433/", "127.0.0.1"),
        ("http://0x7f000001/", "127.0.0.1"),
        ("http://0x7f.1/", "127.0.0.1"),
        ("http://0177.0.0.1/", "127.0.0.1"),
        ("http://127.1/", "127.0.0.1"),
        ("http://3627729970/", "216.58.196.50"),
        ("http://１２７.0.0.1/", "127.0.0.1"),
        ("http://127.0.0.1./", "127.0.0.1"),
    ],
)
def test_ipv4_hosts_in_any_notation_are_decoded_and_warned_about(url: str, address: str) -> None:
    report = inspect_url(url)
    assert report.openable and report.host == address
    assert warned(report, f"points to the IP address {address}")


@pytest.mark.parametrize("url", ["http://2130706433/", "http://0x7f.1/", "http://0177.0.0.1/", "http://１２７.0.0.1/"])
def test_a_disguised_ipv4_notation_gets_its_own_warning(url: str) -> None:
    assert warned(inspect_url(url), "unusual form")


def test_a_dotted_quad_ip_is_not_called_disguised() -> None:
    assert not warned(inspect_url("https://93.184.216.34/"), "unusual form")


def test_an_ipv6_literal_host_is_read_without_brackets_and_warned_about() -> None:
    report = inspect_url("https://[2001:DB8:0:0::1]:8443/path")
    assert (report.host, report.port, report.openable) == ("2001:db8::1", 8443, True)
    assert warned(report, "points to the IP address 2001:db8::1") and warned(report, "port 8443")


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/",
        "http://10.0.0.5/",
        "http://192.168.1.1/",
        "http://[::1]/",
        "http://169.254.169.254/latest/meta-data",
        "http://0.0.0.0/",
    ],
)
def test_loopback_private_and_link_local_addresses_are_warned_about(url: str) -> None:
    assert warned(inspect_url(url), "this computer or a private network")


@pytest.mark.parametrize("url", ["http://localhost:3000/callback", "http://app.localhost/"])
def test_localhost_names_are_warned_about(url: str) -> None:
    assert warned(inspect_url(url), "localhost")


@pytest.mark.parametrize(
    ("url", "port"),
    [("https://a.com:443/", 443), ("http://a.com:80/", 80), ("https://a.com:/x", None), ("https://a.com:0443/", 443)],
)
def test_default_ports_are_not_warned_about(url: str, port: int | None) -> None:
    report = inspect_url(url)
    assert report.port == port and not warned(report, "port")


@pytest.mark.parametrize(
    ("url", "port"),
    [("https://a.com:8443/", 8443), ("http://a.com:443/", 443), ("https://a.com:80/", 80), ("https://a.com:0/", 0)],
)
def test_non_default_ports_are_warned_about(url: str, port: int) -> None:
    report = inspect_url(url)
    assert report.openable and report.port == port and warned(report, f"unusual port {port}")


def test_a_link_with_several_problems_lists_every_warning() -> None:
    report = inspect_url("http://admin:pw@xn--pple-43d.com:8080/")
    assert len(report.warnings) == 5 and report.openable


@pytest.mark.parametrize("garbage", [None, 42, b"https://example.com", ["https://example.com"], object()])
def test_input_that_is_not_text_is_refused_without_raising(garbage: object) -> None:
    report = inspect_url(garbage)  # type: ignore[arg-type]
    assert not report.openable and report.error == "the link is not text"


def test_a_refused_link_still_reports_its_scheme_for_the_message() -> None:
    assert inspect_url("javascript:alert(1)").scheme == "javascript"


@pytest.mark.parametrize(
    ("url", "parts"),
    [
        ("https://example.com/a?b#c", ("https://", "example.com", "/a?b#c")),
        ("https://user:pw@evil.example:8080/x", ("https://user:pw@", "evil.example", ":8080/x")),
        ("https://[::1]:8080/", ("https://", "[::1]", ":8080/")),
        ("https://xn--pple-43d.com", ("https://", "xn--pple-43d.com", "")),
        ("  https://a.com/  ", ("https://", "a.com", "/")),
        ("https://good.example#@evil.example", ("https://", "good.example", "#@evil.example")),
        ("javascript:alert(1)", ("javascript:alert(1)", "", "")),
        ("not a url", ("not a url", "", "")),
        ("", ("", "", "")),
    ],
)
def test_highlight_parts_isolates_the_host_for_emphasis(url: str, parts: tuple[str, str, str]) -> None:
    assert highlight_parts(url) == dict(zip(("before", "host", "after"), parts, strict=True))


def test_highlight_parts_tolerates_input_that_is_not_text() -> None:
    assert highlight_parts(None) == {"before": "", "host": "", "after": ""}  # type: ignore[arg-type]


ALPHABET = "ahx:/.@[]%\\?#-_0179 \t\u0430\u4e2d\uff10\u3002" + "xn--" + "https://"


def test_random_garbage_never_raises_and_only_http_links_are_ever_openable() -> None:
    rng = random.Random(58444)
    for _ in range(3000):
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 40)))
        if rng.random() < 0.5:
            text = rng.choice(["https://", "http://", "javascript:", ""]) + text
        report = inspect_url(text)
        parts = highlight_parts(text)
        assert parts["before"] + parts["host"] + parts["after"] == report.url
        assert (report.error is None) == report.openable
        if report.openable:
            assert report.scheme in ("http", "https") and report.host
            assert report.url.lower().startswith(report.scheme + "://")
