"""No private member of the `mcp` SDK is named outside the seam (webhost/upstream/sdk/), and the SDK installed is
the minor release the seam was tested on.

The scan reads webhost's source (ast) and, for the classes that derive from an SDK class, the classes
themselves. It reports, outside the seam:

- an import of a private SDK module, or of a private name from an SDK module;
- `getattr`/`setattr`/`hasattr`/`delattr` with a private name as a string (a reach the scan cannot type);
- in a webhost class that derives from an SDK class (and in every webhost class in its MRO, mixins
  included): a method or attribute defined with, or an attribute read under, a private name one of its SDK
  base classes defines (an override, or a use of the SDK's internals);
- elsewhere, `anything._name` where `_name` is a private name the SDK defines and webhost does not define
  anywhere outside the seam (so webhost's own `_done`, `_store` ... are not taken for the SDK's);
- replacing an SDK object's `context.lock`.

`test_the_scan_finds_each_private_member_the_seam_names` runs the same scan over the seam itself, so a scan
that stopped seeing things fails too.
"""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import importlib.util
import inspect
import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tests.support.process import ROOT
from webhost.upstream.sdk import TESTED_MCP

SDK_PACKAGES = ("mcp", "mcp_types")


def package_root(name: str) -> Path:
    spec = importlib.util.find_spec(name)  # located, not imported: mcp_types comes with mcp, it is not ours
    assert spec is not None and spec.submodule_search_locations is not None, f"{name} is not installed"
    return Path(next(iter(spec.submodule_search_locations)))


SDK_ROOTS = [package_root(name) for name in SDK_PACKAGES]
WEBHOST = ROOT / "webhost"
SEAM = WEBHOST / "upstream" / "sdk"
REACHES = {"getattr", "setattr", "hasattr", "delattr"}


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def defined_names(tree: ast.AST) -> set[str]:
    """Every name a source file defines: functions, classes, assigned names and attributes."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


@cache
@cache  # each file is read by several scans
def parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


@cache
def sdk_private_names() -> frozenset[str]:
    """Every private name the installed SDK defines, anywhere in it."""
    files = [path for root in SDK_ROOTS for path in root.rglob("*.py")]
    return frozenset(name for path in files for name in defined_names(parsed(path)) if private(name))


def webhost_files(*, seam: bool) -> list[Path]:
    """webhost's source files outside the seam (seam=False) or in it (seam=True)."""
    return sorted(path for path in WEBHOST.rglob("*.py") if path.is_relative_to(SEAM) == seam)


@cache
def webhost_private_names() -> frozenset[str]:
    """Every private name webhost defines outside the seam."""
    files = webhost_files(seam=False)
    return frozenset(name for path in files for name in defined_names(parsed(path)) if private(name))


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def importable(path: Path) -> bool:
    """Modules the scan may import: not the alembic scripts (they run only under alembic), not `__main__`."""
    return "migrations" not in path.parts and path.name != "__main__.py"


@dataclass(frozen=True)
class Finding:
    path: Path
    line: int
    name: str
    why: str

    def __str__(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}: {self.name} ({self.why})"


def sdk_module(module: str | None) -> bool:
    return module is not None and module.split(".")[0] in SDK_PACKAGES


def import_findings(path: Path) -> Iterator[Finding]:
    for node in ast.walk(parsed(path)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if sdk_module(alias.name) and any(private(part) for part in alias.name.split(".")):
                    yield Finding(path, node.lineno, alias.name, "a private SDK module")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and sdk_module(node.module):
            assert node.module is not None
            if any(private(part) for part in node.module.split(".")):
                yield Finding(path, node.lineno, node.module, "a private SDK module")
            for alias in node.names:
                if private(alias.name):
                    yield Finding(path, node.lineno, f"{node.module}.{alias.name}", "a private SDK name")


def reach_findings(path: Path) -> Iterator[Finding]:
    for node in ast.walk(parsed(path)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in REACHES:
            for arg in node.args[1:2]:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and private(arg.value):
                    yield Finding(path, node.lineno, arg.value, f"reached by name through {node.func.id}")


def lock_findings(path: Path) -> Iterator[Finding]:
    for node in ast.walk(parsed(path)):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and node.attr == "lock"
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "context"
        ):
            yield Finding(path, node.lineno, "context.lock", "replaces the SDK provider's lock")


@cache
def sdk_derived_classes() -> tuple[type, ...]:
    """webhost's classes (seam included) that have an SDK class in their MRO."""
    found: list[type] = []
    for path in sorted(WEBHOST.rglob("*.py")):
        if not importable(path):
            continue
        module = importlib.import_module(module_name(path))
        for value in vars(module).values():
            if (
                inspect.isclass(value)
                and value.__module__ == module.__name__
                and any(sdk_module(base.__module__) for base in value.__mro__)
            ):
                found.append(value)
    return tuple(found)


def sdk_members(cls: type) -> set[str]:
    """The private names the SDK classes in `cls`'s MRO define: class members and `self._x` attributes."""
    names: set[str] = set()
    for base in cls.__mro__:
        if not sdk_module(base.__module__):
            continue
        names.update(name for name in vars(base) if private(name))
        try:
            source = inspect.getsource(base)
        except (OSError, TypeError):
            continue
        names.update(name for name in defined_names(ast.parse(_dedent(source))) if private(name))
    return names


def _dedent(source: str) -> str:
    lines = source.splitlines()
    indent = min((len(line) - len(line.lstrip()) for line in lines if line.strip()), default=0)
    return "\n".join(line[indent:] for line in lines)


def class_nodes(path: Path) -> dict[str, ast.ClassDef]:
    """The module's classes by qualified name."""
    nodes: dict[str, ast.ClassDef] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                nodes[prefix + node.name] = node
                visit(node.body, prefix + node.name + ".")
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                visit(node.body, prefix + node.name + ".<locals>.")

    visit(parsed(path).body, "")
    return nodes


def subclass_findings(files: list[Path]) -> Iterator[Finding]:
    """Overrides and uses of the SDK's private members in webhost classes built on SDK classes (mixins too)."""
    scanned = set(files)
    for derived in sdk_derived_classes():
        members = sdk_members(derived)
        for cls in derived.__mro__:
            if not cls.__module__.startswith("webhost."):
                continue
            path = Path(inspect.getfile(cls))
            if path not in scanned:
                continue
            node = class_nodes(path).get(cls.__qualname__)
            if node is None:
                continue
            for inner in ast.walk(node):
                if isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef) and inner.name in members:
                    yield Finding(path, inner.lineno, inner.name, f"overrides the SDK's, in {cls.__name__}")
                elif isinstance(inner, ast.Attribute) and inner.attr in members:
                    yield Finding(path, inner.lineno, inner.attr, f"the SDK's, used in {cls.__name__}")
                elif isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Store) and inner.id in members:
                    yield Finding(path, inner.lineno, inner.id, f"overrides the SDK's, in {cls.__name__}")


def attribute_findings(path: Path) -> Iterator[Finding]:
    sdk, own = sdk_private_names(), webhost_private_names()
    for node in ast.walk(parsed(path)):
        if isinstance(node, ast.Attribute) and node.attr in sdk and node.attr not in own:
            yield Finding(path, node.lineno, node.attr, "a private name of the SDK")


def scan(files: list[Path]) -> list[Finding]:
    findings: set[Finding] = set(subclass_findings(files))
    for path in files:
        for found in (import_findings, reach_findings, lock_findings, attribute_findings):
            findings.update(found(path))
    return sorted(findings, key=lambda f: (str(f.path), f.line, f.name))


def test_no_private_sdk_member_is_named_outside_the_seam() -> None:
    findings = scan(webhost_files(seam=False))
    assert not findings, "private SDK members outside webhost/upstream/sdk/ (move each into the seam):\n" + "\n".join(
        str(f) for f in findings
    )


def test_the_scan_finds_each_private_member_the_seam_names() -> None:
    named = {finding.name for finding in scan(webhost_files(seam=True))}
    expected = {
        "mcp.client._transport",  # TransportStreams
        "_drive_input_required",  # RoundObservingClient
        "_absorb_tool_listing",
        "_build_capabilities",
        "_initialize",  # ProviderHooks: PersonOAuth and the client-credentials providers
        "_initialized",
        "_refresh_token",
        "_handle_refresh_response",
        "_auth_flow",
        "_add_auth_header",
        "context.lock",  # share_lock
        "_process",  # close_subprocess_transport
        "_transport",
    }
    assert expected <= named, f"the scan no longer sees {sorted(expected - named)} in the seam"


def test_the_installed_mcp_is_the_minor_release_the_seam_was_tested_on() -> None:
    installed = importlib.metadata.version("mcp")
    assert installed.split(".")[:2] == TESTED_MCP.split("."), (
        f"mcp {installed} is installed; upstream/sdk/ was tested on {TESTED_MCP}.x: check each private member it "
        "names against this release, then move TESTED_MCP and the pin in pyproject.toml"
    )


def test_pyproject_pins_mcp_to_the_tested_minor_release() -> None:
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    pins = [dep for dep in dependencies if re.match(r"mcp\s*[<>=!~]", dep)]
    major, minor = (int(part) for part in TESTED_MCP.split("."))
    assert pins == [f"mcp>={major}.{minor}.0,<{major}.{minor + 1}"]


def test_the_import_contract_protects_every_private_module_of_the_installed_sdk() -> None:
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    (protected,) = [c for c in contracts if "webhost.upstream.sdk" in c.get("allowed_importers", [])]
    found: set[str] = set()
    for root in SDK_ROOTS:
        for path in root.rglob("*"):
            if path.suffix != ".py" and not (path.is_dir() and (path / "__init__.py").exists()):
                continue
            parts = [root.name, *path.relative_to(root).with_suffix("").parts]
            if parts[-1] == "__init__":
                continue
            first = next((i for i, part in enumerate(parts) if private(part)), None)
            if first is not None:
                found.add(".".join(parts[: first + 1]))  # a private package covers what is under it
    assert sorted(protected["protected_modules"]) == sorted(found)
