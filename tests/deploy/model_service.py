"""The scripted model endpoint (tests/support/model_endpoint.py) as a service on the team stack's network: the
same app, listening on every interface of its container so the replicas reach it as http://model:PORT.

    python -m tests.deploy.model_service --port 9000 --script /script.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import uvicorn

from tests.support.model_endpoint import build_app
from tests.support.model_script import Scripts


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--script", type=Path, required=True, help="{MODEL: [rules]} (tests/support/model_script.py)")
    args = parser.parse_args(argv)
    scripts = Scripts()
    scripts.load(json.loads(args.script.read_text(encoding="utf-8")))
    uvicorn.run(build_app(scripts), host="0.0.0.0", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
