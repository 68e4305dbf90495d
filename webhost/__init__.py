"""webhost: a self-hosted web host for MCP servers."""

__version__ = "0.1.0"
