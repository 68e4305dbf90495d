"""Where each of one person's input requests goes: the tab whose call caused it, or every tab of that person.

A server's request for input reaches the tab whose call caused it: exactly, through the call's context
(`current_tab`); by elimination for a legacy server→client request, which arrives on the SDK's receive
task (the one tab busy with that server, or the only tab). When no single tab can be named, it goes to
every tab of the person, and the first answer wins. Only a tab that was asked may answer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from webhost.calls import CallRegistry, current_origin, current_tab
from webhost.config import WebhostOptions
from webhost.elicitation.broker import InputBroker
from webhost.elicitation.requests import Activity, InputRequests

from .deps import Tab

CHAT_TAB = "chat"  # the "tab" the model's calls run in (`current_tab`): their input requests go to the chat


class InputRoutes:
    """The person's pending input requests (one broker for all their tabs) and the tab each was asked in."""

    def __init__(
        self,
        tabs: Mapping[str, Tab],
        options: WebhostOptions,
        *,
        activity: Activity,
        leave_app: Callable[[str, str], None],
        roots: Callable[[], list[dict[str, Any]]] = lambda: [],
    ) -> None:
        self._tabs = tabs  # the workspace's live tabs, by id
        self._routes: dict[str, str | None] = {}  # input request id → the tab it was asked in (None: every tab)
        self._options = options
        self._activity = activity
        # Tabs that went away while calls of theirs still run (left_calls.py): what those calls ask goes to every tab.
        self._left: dict[str, InputRequests] = {}
        self.broker = InputBroker(self._publish, human_timeout=options.human_timeout, leave_app=leave_app)
        # The requests no single tab can be named for: asked of every tab.
        self.any_tab = InputRequests(
            broker=self.broker,
            apps=None,
            calls=None,
            options=options,
            activity=activity,
            route=self.route_to(None),
            roots=roots,
        )
        # The model's calls (the chat): asked of every tab, attributed to the call (its conversation).
        self.chat_calls = CallRegistry(on_end=self._chat_call_ended, tab=CHAT_TAB)
        self.chat = InputRequests(
            broker=self.broker,
            apps=None,
            calls=self.chat_calls,
            options=options,
            activity=activity,
            route=self.route_to(None),
            roots=roots,
        )

    def route_to(self, tab_id: str | None) -> Callable[[str], None]:
        """What a tab's (or, with None, every tab's) `InputRequests` calls with each request it asks."""

        def route(request_id: str) -> None:
            self._routes[request_id] = tab_id

        return route

    def routed_to(self, request_id: str) -> str | None:
        return self._routes.get(request_id)

    def asked(self, request_id: str, tab_id: str) -> bool:
        return request_id in self._routes and self._routes[request_id] in (tab_id, None)

    def pending_for(self, tab_id: str) -> list[dict[str, Any]]:
        """The open input requests a tab should show: its own and those asked of every tab."""
        return [view for view in self.broker.pending() if self._routes.get(str(view.get("id"))) in (tab_id, None)]

    def release_tab(self, tab_id: str) -> None:
        """A tab closed: what it was asked is released, and with no tab left, what every tab was asked; what a
        call it left running asks stays, for the person's next tab."""
        self.broker.release(
            lambda p: (
                (self._routes.get(p.id) == tab_id or (not self._tabs and p.id in self._routes))
                and not self._of_left_call(p.origin)
            )
        )

    def leave(self, tab_id: str, calls: CallRegistry, call_ids: set[str]) -> None:
        """`tab_id` went away leaving `call_ids` running in `calls`: what they ask goes to every tab from now on."""
        if not call_ids:
            return
        self._left[tab_id] = InputRequests(
            broker=self.broker,
            apps=None,
            calls=calls,
            options=self._options,
            activity=self._activity,
            route=self.route_to(None),
        )
        for view in self.broker.pending():
            request_id = str(view.get("id"))
            origin = view.get("origin") or {}
            if self._routes.get(request_id) == tab_id and origin.get("callId") in call_ids:
                self._routes[request_id] = None
                for tab in self._tabs.values():  # asked of every tab now: the others may answer it too
                    tab.notify("elicitation/request", view)

    def left_done(self, tab_id: str) -> None:
        """The last call `tab_id` left running ended."""
        self._left.pop(tab_id, None)

    def _of_left_call(self, origin: dict[str, Any] | None) -> bool:
        call_id = (origin or {}).get("callId")
        return isinstance(call_id, str) and any(
            requests.calls is not None and requests.calls.running(call_id) for requests in self._left.values()
        )

    def requests_for(self, server: str) -> InputRequests:
        """Whose tab a server's request belongs to: the call's own tab, the one tab busy with that server, or all."""
        tab_id = current_tab.get()
        if tab_id == CHAT_TAB:
            return self.chat
        if tab_id is not None and tab_id in self._tabs:
            return self._tabs[tab_id].requests
        if tab_id is not None and tab_id in self._left:
            return self._left[tab_id]
        if _belongs_to_no_tab(current_origin.get()):
            return self.any_tab
        busy = [tab.requests for tab in self._tabs.values() if tab.calls.busy_on(server)]
        if self.chat_calls.busy_on(server):
            busy.append(self.chat)
        if len(busy) == 1:
            return busy[0]
        if not busy and len(self._tabs) == 1:
            return next(iter(self._tabs.values())).requests
        return self.any_tab

    def _chat_call_ended(self, call_id: str) -> None:
        """A model's call ended: what it left waiting for the person is released."""
        self.broker.release(
            lambda p: (
                self._routes.get(p.id) is None
                and (p.origin or {}).get("callId") == call_id
                and bool((p.origin or {}).get("conversationId"))
            )
        )

    def _publish(self, method: str, params: dict[str, Any]) -> None:
        request_id = str(params.get("id"))
        tab_id = self._routes.get(request_id)
        own = self._tabs.get(tab_id) if tab_id is not None else None
        targets = [own] if own is not None else list(self._tabs.values())
        if method == "elicitation/resolved":
            self._routes.pop(request_id, None)
        for tab in targets:
            tab.notify(method, params)


def _belongs_to_no_tab(origin: dict[str, Any] | None) -> bool:
    """A call run outside every tab: one resumed from a stopped replica (webhost/resume.py) asks every tab."""
    return bool((origin or {}).get("resumed"))
