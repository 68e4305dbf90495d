// A real OAuth 2.1 authorization server for MCP servers (the npm `oidc-provider` package), loopback only.
//
//   node oauth-as.mjs --port PORT [--ttl SECONDS] [--refuse-registration] [--no-revocation]
//
// Issuer http://localhost:PORT. Dynamic client registration (RFC 7591; `--refuse-registration` makes it
// answer 400 invalid_client_metadata), PKCE S256 required, resource indicators (RFC 8707: every access
// token is a JWT for the requested resource, scopes `mcp:tools` and `mcp:admin`), refresh tokens that
// rotate, revocation (RFC 7009) unless `--no-revocation`, access tokens that live `--ttl` seconds
// (default 3600). Its sign-in page is the same one-form page as oidc-provider.mjs (login = password
// prefix: ada / ada-pw, bob / bob-pw) with a Deny button (access_denied).
//
// Test controls (loopback, no auth): GET /_stats -> {"grants": {"authorization_code": n, "refresh_token": n},
// "revoked": n, "registered": n}; POST /_break-token makes every later token request answer 400
// {"error": "server_error"}; POST /_mend-token undoes it; POST /_refuse-refresh answers every later token
// request 400 invalid_grant (counted as a refresh). Prints "ready" on stdout once it listens.
import crypto from "node:crypto";
import http from "node:http";
import Provider from "oidc-provider";
import { readForm, signInPage } from "./sign-in-page.mjs";

const args = process.argv.slice(2);
const value = (flag) => { const i = args.indexOf(flag); return i >= 0 ? args[i + 1] : undefined; };
const port = Number(value("--port"));
if (!port) throw new Error("--port is required");
const ttl = Number(value("--ttl") ?? 3600);
const refuseRegistration = args.includes("--refuse-registration");
const revocation = !args.includes("--no-revocation");
const issuer = `http://localhost:${port}`;
const RESOURCE_SCOPES = "mcp:tools mcp:admin";

const people = { ada: { name: "Ada Lovelace" }, bob: { name: "Bob Builder" }, carol: { name: "Carol Danvers" } };
const stats = { grants: { authorization_code: 0, refresh_token: 0 }, revoked: 0, registered: 0 };
let brokenToken = false;
let refuseRefresh = false;

const key = crypto.generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ format: "jwk" });
const provider = new Provider(issuer, {
  async findAccount(ctx, id) {
    if (!people[id]) return undefined;
    return { accountId: id, async claims() { return { sub: id, name: people[id].name }; } };
  },
  scopes: ["openid", "offline_access", "mcp:tools", "mcp:admin"],
  pkce: { required: () => true },
  jwks: { keys: [{ ...key, kid: "as-key-1", alg: "RS256", use: "sig" }] },
  cookies: { keys: [crypto.randomBytes(32).toString("hex")] },
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  issueRefreshToken: async (ctx, client) => client.grantTypeAllowed("refresh_token"),
  rotateRefreshToken: () => true,
  // A registered client may later ask for more of the resource's scopes (step-up): the scope it named at
  // registration does not limit it (oidc-provider would otherwise refuse the step-up as invalid_scope).
  extraClientMetadata: {
    properties: ["step_up"],
    validator(ctx, key, value, metadata) { delete metadata.scope; },
  },
  clientDefaults: { grant_types: ["authorization_code", "refresh_token"], token_endpoint_auth_method: "none" },
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    revocation: { enabled: revocation },
    resourceIndicators: {
      enabled: true,
      defaultResource: (ctx, client, oneOf) => oneOf ?? undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resourceIndicator) => ({
        scope: RESOURCE_SCOPES,
        audience: resourceIndicator,
        accessTokenTTL: ttl,
        accessTokenFormat: "jwt",
        jwt: { sign: { alg: "RS256" } },
      }),
    },
  },
});
provider.on("grant.success", (ctx) => {
  const grant = ctx.oidc.params?.grant_type;
  if (grant in stats.grants) stats.grants[grant] += 1;
});
provider.on("grant.revoked", () => { stats.revoked += 1; });
provider.on("revocation.success", () => { stats.revoked += 1; });
provider.on("registration_create.success", () => { stats.registered += 1; });

async function interaction(req, res) {
  const [, , uid, action] = new URL(req.url, issuer).pathname.split("/");
  const details = await provider.interactionDetails(req, res);
  if (details.uid !== uid) throw new Error("interaction mismatch");
  if (req.method === "GET") {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(signInPage("Test authorization server", uid));
    return;
  }
  const form = await readForm(req);
  if (action === "abort") {
    await provider.interactionFinished(req, res, { error: "access_denied", error_description: "End-User aborted interaction" },
      { mergeWithLastSubmission: false });
    return;
  }
  const login = form.get("login") ?? "";
  if (!people[login] || form.get("password") !== `${login}-pw`) {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(signInPage("Test authorization server", uid, "Wrong login or password."));
    return;
  }
  const grant = new provider.Grant({ accountId: login, clientId: details.params.client_id });
  const requested = String(details.params.scope ?? "").split(" ").filter(Boolean);
  // The scopes are both the provider's (registration accepts only those) and the resource's.
  if (requested.length) grant.addOIDCScope(requested.join(" "));
  const resource = details.params.resource;
  const granted = requested.filter((s) => RESOURCE_SCOPES.split(" ").includes(s));
  for (const indicator of [].concat(resource ?? [])) grant.addResourceScope(indicator, granted.join(" ") || "mcp:tools");
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { login: { accountId: login }, consent: { grantId } },
    { mergeWithLastSubmission: false });
}

const callback = provider.callback();
const json = (res, status, body) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
const handler = (req, res) => {
  const path = new URL(req.url, issuer).pathname;
  if (path === "/_stats") return json(res, 200, stats);
  if (path === "/_break-token" && req.method === "POST") { brokenToken = true; return json(res, 200, {}); }
  if (path === "/_mend-token" && req.method === "POST") { brokenToken = false; return json(res, 200, {}); }
  if (path === "/_refuse-refresh" && req.method === "POST") { refuseRefresh = true; return json(res, 200, {}); }
  if (path === "/token" && refuseRefresh) {
    // Every token request is answered invalid_grant while this is on (the tests send only refreshes then).
    stats.grants.refresh_token += 1;
    return json(res, 400, { error: "invalid_grant", error_description: "grant request is invalid" });
  }
  if (path === "/token" && brokenToken) {
    return json(res, 400, { error: "server_error", error_description: "the token endpoint is broken on purpose" });
  }
  if (path === "/reg" && refuseRegistration && req.method === "POST") {
    return json(res, 400, { error: "invalid_client_metadata", error_description: "registration is closed here" });
  }
  if (path.startsWith("/interaction/")) {
    interaction(req, res).catch((error) => {
      res.writeHead(400, { "content-type": "text/plain" }).end(`interaction failed: ${error.message}`);
    });
    return;
  }
  callback(req, res);
};

for (const host of ["127.0.0.1", "::1"]) {
  const server = http.createServer(handler);
  server.on("error", (error) => {
    if (host === "::1") return;
    throw error;
  });
  server.listen(port, host, () => { if (host === "127.0.0.1") console.log("ready"); });
}
process.on("SIGTERM", () => process.exit(0));
