"""webhost: a self-hosted web host for MCP servers."""

from importlib.metadata import PackageNotFoundError, version

try:  # pyproject.toml is the one place the version is written; the installed metadata carries it
    __version__ = version("webhost")
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"
