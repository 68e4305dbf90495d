"""docker-compose.team.yml, checked by reading (there is no Docker engine here): it uses the shipped nginx
template with exactly the values the template asks for, the Dockerfile's entry point with options
webhost's own parser accepts, one database and one secret for every replica, and health checks."""

from __future__ import annotations

import re
from typing import Any

import yaml

from tests.support.process import ROOT
from tests.support.team import TEMPLATE, render_template
from webhost.cli import settings_from
from webhost.storage.urls import database_url_problem, is_postgres

COMPOSE = ROOT / "docker-compose.team.yml"
SAMPLE = {
    "WEBHOST_PAGE_HOST": "webhost.example.com",
    "WEBHOST_SANDBOX_DOMAIN": "apps.example.com",
    "POSTGRES_PASSWORD": "0123456789abcdef",
    "WEBHOST_SECRET": "s" * 64,
    "WEBHOST_TOKEN": "t" * 48,
    "WEBHOST_BIND_ADDRESS": "0.0.0.0",
}


def substituted(value: str) -> str:
    """Compose's ${NAME}, ${NAME:?message} and ${NAME:-default} with the sample .env values."""
    return re.sub(r"\$\{([A-Z_]+)(?:[:?-][^}]*)?\}", lambda m: SAMPLE[m.group(1)], value)


def services() -> dict[str, Any]:
    document = yaml.safe_load(COMPOSE.read_text())
    found: dict[str, Any] = document["services"]
    return found


def replicas() -> dict[str, Any]:
    return {name: s for name, s in services().items() if s.get("build") == "."}


def test_nginx_mounts_the_shipped_template_and_gives_it_exactly_its_values() -> None:
    nginx = services()["nginx"]
    mounts = {volume.split(":")[0]: volume.split(":")[1] for volume in nginx["volumes"]}
    assert mounts["./deploy/webhost.conf.template"] == "/etc/nginx/templates/webhost.conf.template"
    for source in mounts:
        assert (ROOT / source).exists() or source == "./deploy/tls", source  # certificates are the operator's
    values = {k: substituted(v) for k, v in nginx["environment"].items() if k.startswith("WEBHOST_")}
    rendered = render_template(values)  # raises unless the names match the template's exactly
    assert "hash $webhost_sticky consistent;" in rendered and "server_name *.apps.example.com;" in rendered
    assert "listen 8443 ssl;" in rendered and "${" not in rendered
    assert TEMPLATE.name in nginx["volumes"][0]


def test_replicas_use_the_dockerfile_entry_point_with_options_webhost_accepts() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert 'ENTRYPOINT ["webhost", "serve"' in dockerfile
    found = replicas()
    assert len(found) >= 2
    nginx_env = services()["nginx"]["environment"]
    for name, replica in found.items():
        assert "entrypoint" not in replica, name
        settings = settings_from(["serve", *[substituted(arg) for arg in replica["command"]]])
        assert settings.public_origins == ("https://webhost.example.com",)
        assert (settings.sandbox_domain, settings.sandbox_scheme) == ("apps.example.com", "https")
        assert settings.sandbox_public_port == 443 and settings.secure_cookies
        assert f"server {name}:{settings.port}" in nginx_env["WEBHOST_PAGE_SERVERS"]
        assert f"server {name}:{settings.sandbox_port}" in nginx_env["WEBHOST_SANDBOX_SERVERS"]
        env = {key: substituted(value) for key, value in replica["environment"].items()}
        assert is_postgres(env["WEBHOST_DATABASE_URL"]) and database_url_problem(env["WEBHOST_DATABASE_URL"]) is None
        assert env["WEBHOST_SECRET"] == SAMPLE["WEBHOST_SECRET"]
        assert replica["depends_on"]["postgres"]["condition"] == "service_healthy"
        assert "/data" in " ".join(replica["volumes"])
    # One database and one secret for all of them.
    assert len({str(r["environment"]) for r in found.values()}) == 1


def test_every_service_has_a_health_check_and_no_new_privileges() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "HEALTHCHECK" in dockerfile and "USER webhost" in dockerfile  # the replicas' own
    for name, service in services().items():
        assert "no-new-privileges:true" in service["security_opt"], name
        if service.get("build") != ".":
            assert service["healthcheck"]["test"], name
    assert "unprivileged" in services()["nginx"]["image"]


def test_the_env_example_names_every_variable_the_compose_file_needs() -> None:
    needed = set(re.findall(r"\$\{([A-Z_]+)", COMPOSE.read_text()))
    example = (ROOT / "deploy" / "env.example").read_text()
    assert needed == set(SAMPLE)
    assert all(re.search(rf"^{name}=", example, re.M) for name in needed)
