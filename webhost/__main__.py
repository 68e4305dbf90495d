"""`python -m webhost ...` is the same program as the `webhost` command."""

from webhost.cli import main

raise SystemExit(main())
