"""One person's servers, shared by all of that person's tabs (`Workspace`), and the owners it composes.

`workspace.py` composes them and receives what the servers send (`ConnectionEvents`); `routes.py` says which
tab each input request belongs to; `values.py` keeps the person's `${input:ID}` values; `sign_in.py` signs
the person in to and out of remote servers; `activity.py` shapes the activity entries; `deps.py` is what a
host shares with every workspace and what a workspace needs of a tab.
"""

from .activity import MAX_ACTIVITY_DATA
from .deps import HostDeps, Tab
from .values import expand_for
from .workspace import Workspace

__all__ = ["MAX_ACTIVITY_DATA", "HostDeps", "Tab", "Workspace", "expand_for"]
