"""`${...}` references in the configuration file: `${VAR}` expanded from the environment, `${user.*}` and
`${input:ID}` kept for each person's connection, anything else refused with one line.

Shared by `file.py`, `chat.py` and `auth.py`, so all read references by the same rules.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated

from pydantic import AfterValidator, ValidationInfo
from pydantic_core import PydanticCustomError

# A `${...}` reference: an environment variable (with an optional default), a per-person value
# that is left for connect time (contract §5, §6), or anything else, which is an error.
_REF = re.compile(
    r"\$\{(?:(?P<var>[A-Za-z_][A-Za-z0-9_]*)(?::-(?P<default>[^}]*))?\}"
    r"|(?P<person>(?:user\.(?:id|email|name)|input:[A-Za-z0-9_.-]+))\}"
    r"|(?P<bad>[^}]*)(?P<closed>\}?))"
)
ERROR = "webhost_config"
INPUT_REF = re.compile(r"\$\{input:([A-Za-z0-9_.-]+)\}")


def invalid(message: str) -> PydanticCustomError:
    return PydanticCustomError(ERROR, "{message}", {"message": message})


def expand(value: str, info: ValidationInfo) -> str:
    """Expand ${VAR} and ${VAR:-default} from the environment; an unset VAR without default is an error."""
    environ: Mapping[str, str] = (info.context or {}).get("environ", {})

    def substitute(match: re.Match[str]) -> str:
        if match.group("person") is not None:
            return match.group(0)
        if match.group("bad") is not None:
            if not match.group("closed"):
                raise invalid('unclosed "${" (write ${NAME} or ${NAME:-default})')
            raise invalid(
                f'"{match.group(0)}" is not a variable reference (names use letters, digits '
                "and '_' and do not start with a digit)"
            )
        var, default = match.group("var"), match.group("default")
        if var in environ:
            return environ[var]
        if default is not None:
            return default
        raise invalid(f"environment variable {var} is not set")

    return _REF.sub(substitute, value)


def expansions(value: str, environ: Mapping[str, str]) -> list[str]:
    """The values `expand` puts in place of each ${VAR} (or its default) in `value`."""
    found = []
    for match in _REF.finditer(value):
        var, default = match.group("var"), match.group("default")
        if var is None:  # ${user.*} and ${input:*}: per-person values, filled in at connect time
            continue
        if var in environ:
            found.append(environ[var])
        elif default is not None:
            found.append(default)
    return found


Expanded = Annotated[str, AfterValidator(expand)]
