"""One connection's sign-in to its remote server: which OAuth provider, and where the person's sign-in stands.

The provider is made on the connection's first start, for the person and the page's callback URL, and kept
across reconnects (it holds the person's tokens in memory; they never leave it except sealed). While the
SDK's flow waits for the person, `url` is the authorization URL to open; `changed` is set (and replaced)
at every move, for whoever waits for the flow to publish a URL or end. The link itself is the flow's
`SignInView` (`link.py`): it lifts the connect deadline and stops the call clocks while the person is asked.
"""

from __future__ import annotations

from typing import Any

import anyio

from webhost.config import ServerConfig

from .oauth import IdentityAssertionOAuth, OAuthBinding, PersonOAuth, ServerOAuth, SignInView, machine_oauth


class SignInState:
    def __init__(self, binding: OAuthBinding | None) -> None:
        self.binding = binding  # whose tokens, and the callback URL (None: this host gives no server OAuth)
        self.provider: ServerOAuth | None = None  # this person's OAuth with the server (made on start)
        self.url: str | None = None  # the authorization URL while the flow waits for the person
        self.changed = anyio.Event()  # set (and replaced) whenever the sign-in state moves

    def uses_oauth(self, config: ServerConfig) -> bool:
        """Remote servers sign in per person, unless the entry sets its own Authorization header."""
        return (
            self.binding is not None
            and config.transport in ("http", "sse")
            and not any(k.lower() == "authorization" for k in config.headers)
        )

    def provider_for(self, config: ServerConfig, view: SignInView) -> ServerOAuth | None:
        """The provider for a start with this entry: the one kept, unless the URL or callback changed."""
        if not self.uses_oauth(config):
            return None
        binding = self.binding
        assert binding is not None
        settings = config.oauth
        if settings is not None and settings.grant == "client_credentials" and settings.client_id:
            if self.provider is None or self.provider.context.server_url != config.url:
                self.provider = machine_oauth(config, binding.person_id, binding.deps)
            return self.provider
        if settings is not None and settings.grant == "identity_assertion":
            if not isinstance(self.provider, IdentityAssertionOAuth) or self.provider.context.server_url != config.url:
                self.provider = IdentityAssertionOAuth(config, binding.person_id, binding.deps)
            return self.provider
        redirect_uri = binding.redirect_uri()
        if (
            self.provider is None
            or self.provider.redirect_uri != redirect_uri
            or self.provider.context.server_url != config.url
        ):
            self.provider = PersonOAuth(config, binding.person_id, redirect_uri, binding.deps, view)
        return self.provider

    def view(self, auth_required: bool) -> dict[str, Any] | None:
        """What the page needs to offer sign-in or sign-out (never a token): None for a server without OAuth."""
        if self.provider is None:
            return None
        return {
            "signedIn": self.provider.context.current_tokens is not None and not auth_required,
            "waiting": self.url is not None,
        }

    def moved(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()
