"""README.md documents every setting: its flag and its WEBHOST_* variable, in one row of the options table."""

from __future__ import annotations

import pytest

from tests.support.process import ROOT
from webhost.settings import Settings, env_for, flag_for

README_ROWS = [line for line in (ROOT / "README.md").read_text().splitlines() if line.startswith("| ")]


@pytest.mark.parametrize("name", list(Settings.model_fields))
def test_every_setting_has_a_row_with_its_flag_and_variable(name: str) -> None:
    flag, env = flag_for(name), env_for(name)
    rows = [row for row in README_ROWS if f"`{env}`" in row]
    assert len(rows) == 1, f"README.md's options table needs one row for {env}"
    cells = [cell.strip() for cell in rows[0].strip("|").split(" | ")]
    assert cells[1] == f"`{env}`"
    if flag is None:
        assert cells[0] == "(none)"
    else:
        assert cells[0].strip("`").split()[0] == flag


# The `webhost` keys issue 25 added: each has one row in README.md's table of the `webhost` key.
ISSUE_25_KEYS = ["servers.NAME.protocol", "timeouts.maxTotal"]


# And the `webhost.access` rules issue 29 added.
ISSUE_29_KEYS = [
    "access.default",
    "access.servers.NAME.groups",
    "access.servers.NAME.tools.TOOL.groups",
    "access.models.ID.groups",
]


@pytest.mark.parametrize("key", ISSUE_25_KEYS + ISSUE_29_KEYS)
def test_every_new_webhost_key_has_a_row(key: str) -> None:
    rows = [row for row in README_ROWS if row.startswith(f"| `{key}` |")]
    assert len(rows) == 1, f"README.md's table of the webhost key needs one row for {key}"


@pytest.mark.parametrize(
    "word", ["identity_assertion", "identityProvider", "subjectToken", "/oauth/client-metadata.json"]
)
def test_the_client_identity_options_are_documented(word: str) -> None:
    assert word in (ROOT / "README.md").read_text(), f"README.md must document {word}"
