"""Run the sandbox proxy alone: `python -m sandbox_proxy --port 8701 --domain localhost --host-origin O`.

The deployment secret must be the one webhost signs proxy tokens with. It is read from the
environment variable `WEBHOST_SECRET`, or from the file named by `--secret-file` (which wins);
either way the text is stripped of surrounding whitespace and used as UTF-8 bytes (at least 16).
`--host-origin` may be repeated, once per origin the host page is served on.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import uvicorn

from sandbox_proxy.app import create_sandbox_app
from webhost.apps.origins import is_valid_domain, secret_from_text


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m sandbox_proxy", description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8701, help="port to listen on (default 8701)")
    parser.add_argument("--domain", default="localhost", help="sandbox domain: origins are <label>.DOMAIN")
    parser.add_argument(
        "--host-origin",
        action="append",
        required=True,
        dest="host_origins",
        metavar="ORIGIN",
        help="an origin of the host page, e.g. http://127.0.0.1:8700 (repeatable)",
    )
    parser.add_argument("--secret-file", type=Path, help="file holding the deployment secret")
    parser.add_argument("--log-level", default="info", help="uvicorn log level (default info)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    try:
        if args.secret_file is not None:
            secret = secret_from_text(args.secret_file.read_text(encoding="utf-8"))
        elif os.environ.get("WEBHOST_SECRET"):
            secret = secret_from_text(os.environ["WEBHOST_SECRET"])
        else:
            print("sandbox_proxy: set WEBHOST_SECRET or pass --secret-file", file=sys.stderr)
            return 2
    except (OSError, ValueError) as exc:
        print(f"sandbox_proxy: cannot read the secret: {exc}", file=sys.stderr)
        return 2
    if not is_valid_domain(args.domain.lower()):
        print(f"sandbox_proxy: invalid --domain {args.domain!r}", file=sys.stderr)
        return 2

    try:
        app = create_sandbox_app(secret=secret, domain=args.domain.lower(), host_origins=args.host_origins)
    except ValueError as exc:
        print(f"sandbox_proxy: {exc}", file=sys.stderr)
        return 2
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0


if __name__ == "__main__":
    sys.exit(main())
