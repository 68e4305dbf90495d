"""Every third-party module the code imports is declared in pyproject.toml and pinned in requirements.lock.

webhost/ and sandbox_proxy/ need theirs in `dependencies`; tests/ and bench/ may also use the `test`
extra. A package that arrives only because another one depends on it does not count: that can change
under us in any release.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions

import pytest

from tests.support.process import ROOT

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
FIRST_PARTY = {"webhost", "sandbox_proxy", "tests", "bench"}


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_names(requirements: list[str]) -> set[str]:
    return {normalized(re.match(r"[A-Za-z0-9._-]+", req).group(0)) for req in requirements}  # type: ignore[union-attr]


RUNTIME = requirement_names(PROJECT["dependencies"])
TEST = RUNTIME | requirement_names(PROJECT["optional-dependencies"]["test"])
# The kit (webhost/testing/, webhost/check.py) may also use the `testing` extra; nothing else in webhost/ may.
KIT = RUNTIME | requirement_names(PROJECT["optional-dependencies"]["testing"])
KIT_PATHS = ("webhost/testing/", "webhost/check.py")


def third_party_imports(folder: str) -> dict[str, str]:
    """Top-level module -> one file importing it, for everything under `folder` that is neither the
    standard library nor ours (packages here, or a script's sibling module such as bench/_common.py)."""
    found: dict[str, str] = {}
    for path in sorted((ROOT / folder).rglob("*.py")) if (ROOT / folder).is_dir() else [ROOT / folder]:
        relative = path.relative_to(ROOT).as_posix()
        if "node_modules" in path.parts or (folder == "webhost" and relative.startswith(KIT_PATHS)):
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            else:
                continue
            for module in modules:
                top = module.split(".")[0]
                sibling = (path.parent / f"{top}.py").exists() or (path.parent / top).is_dir()
                if top in sys.stdlib_module_names or top in FIRST_PARTY or sibling:
                    continue
                found.setdefault(top, str(path.relative_to(ROOT)))
    return found


@pytest.mark.parametrize(
    ("folder", "declared"),
    [
        ("webhost", RUNTIME),
        ("sandbox_proxy", RUNTIME),
        ("tests", TEST),
        ("bench", TEST),
        ("webhost/testing", KIT),
        ("webhost/check.py", KIT),
    ],
)
def test_every_imported_package_is_declared(folder: str, declared: set[str]) -> None:
    providers = packages_distributions()
    imports = third_party_imports(folder)
    assert imports, f"found no imports under {folder}/"
    missing = {}
    for module, where in imports.items():
        distributions = {normalized(d) for d in providers.get(module, [])}
        if not distributions & declared:
            missing[module] = (where, sorted(distributions) or "not installed")
    assert not missing, f"imported but not declared in pyproject.toml: {missing}"


def test_the_lock_file_pins_every_declared_package() -> None:
    pins = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[normalized(name)] = version
    assert all(re.fullmatch(r"[0-9][0-9A-Za-z.+!-]*", v) for v in pins.values()), "every line is NAME==VERSION"
    assert not sorted((TEST | KIT) - set(pins)), "declared but not pinned in requirements.lock"
    assert "webhost" not in pins
