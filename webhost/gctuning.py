"""Garbage-collector settings for a long-running `webhost serve`, from what bench/sessions.py measured.

At 200 sessions CPython's default collector (thresholds 700, 10, 10) ran a full pass every 4-5
seconds, and each one walked every object webhost ever made, the ~100 MB of modules, classes and
schemas of start-up included: 200-500 ms with the event loop stopped, which every tab waited
behind (bench/README.md, "Event-loop health"). Two changes, applied once start-up is done:

- `gc.freeze()`: what start-up made lives as long as the process, so it moves to the permanent
  generation and no pass walks it again (a collection first, so that garbage is not kept forever);
- a larger young generation (`GEN0`): most per-call objects (frames, dicts, coroutines) die before
  a young pass, so fewer survive into the older generations and full passes come less often, each
  over what the sessions hold now and no more.

Reference cycles are still collected; only how often and over what changes. Not applied by
`create_app` (tests build many apps in one process, and a frozen object is never collected).
"""

from __future__ import annotations

import gc

GEN0 = 20_000
GEN1 = 20
GEN2 = 20


def tune() -> None:
    gc.collect()
    gc.freeze()
    gc.set_threshold(GEN0, GEN1, GEN2)
