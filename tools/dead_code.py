"""Dead code in webhost/ and sandbox_proxy/, found by vulture (run by scripts/test after mypy).

A name counts as used if anything in the repository uses it (the tests, bench/, the testing kit), or if
tools/vulture_whitelist.py names it (what FastAPI, pydantic, uvicorn, the MCP SDK or Alembic call). Only the
product's own code is reported: the tests' fixtures and hooks would be noise. Exit status 1 if anything is found.
"""

from __future__ import annotations

import sys
from pathlib import Path

from vulture.core import Vulture

ROOT = Path(__file__).resolve().parent.parent
SCANNED = ["webhost", "sandbox_proxy", "tests", "bench", "tools/vulture_whitelist.py"]
REPORTED = ("webhost", "sandbox_proxy")
MIN_CONFIDENCE = 60  # 60: unused functions, classes, methods, attributes and variables (100: unreachable code)


def main() -> int:
    vulture = Vulture()
    vulture.scavenge([str(ROOT / path) for path in SCANNED], exclude=["tests/peers/", "node_modules/"])
    found = [
        item
        for item in vulture.get_unused_code(min_confidence=MIN_CONFIDENCE)
        if Path(item.filename).resolve().relative_to(ROOT).parts[0] in REPORTED
    ]
    for item in found:
        print(item.get_report(add_size=False).replace(str(ROOT) + "/", ""))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
