"""A cheap upper-bound walk over a JSON value: is its encoding (roughly) within a budget? Stops once over."""

from __future__ import annotations


def size_at_most(value: object, budget: int) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            budget -= len(item) + 2
        elif isinstance(item, dict):
            budget -= 2 + 4 * len(item)
            for key, child in item.items():
                budget -= len(str(key))
                stack.append(child)
        elif isinstance(item, list | tuple):
            budget -= 2 + len(item)
            stack.extend(item)
        else:
            budget -= 8
        if budget < 0:
            return False
    return True
