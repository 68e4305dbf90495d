"""`webhost.access` in the configuration file: who may use what (contract §9): the rules (`default`, `servers`,
`models`: access_rules.py, decided by webhost/access_policy.py) and `budgets`, each person's daily token budget by
group and by person, over the default `chat.dailyTokenBudget`.

Which budget applies (`daily_tokens`): a person's own entry (by email, else by id) when there is one; else
the largest of the entries of their groups (a group is a grant: belonging to one more group never lowers what
a person may use); else the default. `0` means no tokens at all; no budget anywhere means no limit.
docs/chat.md and docs/security.md say the same for admins.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pydantic import BaseModel, ConfigDict, Field

from webhost.config.access_rules import AccessRules


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="ignore")


class DailyBudget(_Model):
    """One entry of `budgets.groups` or `budgets.people`."""

    daily_tokens: int = Field(validation_alias="dailyTokens", strict=True, ge=0)


class Budgets(_Model):
    """`webhost.access.budgets`: daily token budgets per group and per person."""

    groups: Mapping[str, DailyBudget] = Field(default_factory=dict)
    people: Mapping[str, DailyBudget] = Field(default_factory=dict)

    def daily_tokens(self, person_id: str, email: str | None, groups: Iterable[str], default: int | None) -> int | None:
        """The tokens (in + out) this person may use per UTC day; None: no limit."""
        own = self._person_entry(person_id, email)
        if own is not None:
            return own.daily_tokens
        granted = [self.groups[g].daily_tokens for g in groups if g in self.groups]
        if granted:
            return max(granted)
        return default

    def _person_entry(self, person_id: str, email: str | None) -> DailyBudget | None:
        if email:
            wanted = email.casefold()
            for key, entry in self.people.items():
                if key.casefold() == wanted:
                    return entry
        return self.people.get(person_id)


class AccessOptions(AccessRules):
    """`webhost.access`: the rules, and the budgets."""

    budgets: Budgets = Budgets()


# Messages for pydantic's own errors under `webhost.access` (file.py merges them into its table).
ACCESS_MESSAGES = {
    "webhost.access": "must be an object",
    "webhost.access.budgets": 'must be an object with "groups" and/or "people"',
    "webhost.access.budgets.groups": 'must map group names to {"dailyTokens": N} objects',
    "webhost.access.budgets.people": 'must map emails (or person ids) to {"dailyTokens": N} objects',
    "webhost.access.budgets.groups.*": 'must be an object with "dailyTokens"',
    "webhost.access.budgets.people.*": 'must be an object with "dailyTokens"',
    "webhost.access.budgets.groups.*.dailyTokens": "must be an integer, 0 or more (tokens per person per day)",
    "webhost.access.budgets.people.*.dailyTokens": "must be an integer, 0 or more (tokens per day)",
}
