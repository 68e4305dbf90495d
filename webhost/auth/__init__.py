"""Getting in (contract §3, §5): the access gate and its three modes, token, oidc and proxy."""

from webhost.auth.gate import COOKIE_NAME, AccessPolicy, AuthGate, describe, same_origin_path

__all__ = ["COOKIE_NAME", "AccessPolicy", "AuthGate", "describe", "same_origin_path"]
