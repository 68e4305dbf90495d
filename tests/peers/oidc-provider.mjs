// A real OpenID provider for webhost's sign-in tests (the npm `oidc-provider` package), loopback only.
//
//   node oidc-provider.mjs --port PORT --redirect URI [--redirect URI ...] [--post-logout URI ...]
//
// Issuer http://localhost:PORT (listening on 127.0.0.1 and ::1). The client `webhost` with secret
// `webhost-secret`, registered for the given redirect URIs, and another relying party, `other-app` with
// secret `other-secret` (the same redirect URIs, and the client_credentials grant): its tokens are not for
// webhost. Both may use the client_credentials grant (a token of no person). Token introspection (RFC 7662)
// is on; access tokens are opaque, except for a request that names the resource `urn:webhost` (a JWT access
// token whose audience is `webhost`) or `urn:other-api` (audience `other-api`), with the scope `api`. Three people (password = "<id>-pw"):
// ada (admin: group webhost-admins), bob (group staff) and carol (group finance) (members). Its own sign-in page is one form
// (login, password) that signs in and consents at once, and a Deny button (access_denied).
// webhost's client may use refresh tokens (every sign-in gets one); the test-only `POST /test/groups/<login>` with
// a body of comma-separated names sets that person's groups, as a directory admin would (a refresh then reads them);
// `POST /test/remove/<login>` removes the person from the directory (a refresh of theirs is then invalid_grant).
// Prints "ready" on stdout once it listens.
import crypto from "node:crypto";
import http from "node:http";
import Provider, { errors } from "oidc-provider";
import { readForm, signInPage } from "./sign-in-page.mjs";

const args = process.argv.slice(2);
const values = (flag) => args.flatMap((arg, i) => (arg === flag ? [args[i + 1]] : []));
const port = Number(values("--port")[0]);
if (!port) throw new Error("--port is required");
const issuer = `http://localhost:${port}`;

const people = {
  ada: { name: "Ada Lovelace", email: "ada@example.com", groups: ["webhost-admins", "staff"] },
  bob: { name: "Bob Builder", email: "bob@example.com", groups: ["staff"] },
  carol: { name: "Carol Danvers", email: "carol@example.com", groups: ["finance"] },
  dave: { name: "Dave Removed", email: "dave@example.com", groups: ["staff"] }, // the one the removal tests remove
};

const key = crypto.generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ format: "jwk" });
const provider = new Provider(issuer, {
  clients: [{
    client_id: "webhost",
    client_secret: "webhost-secret",
    redirect_uris: values("--redirect"),
    post_logout_redirect_uris: values("--post-logout"),
    grant_types: ["authorization_code", "client_credentials", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "client_secret_basic",
  }, {
    client_id: "other-app",
    client_secret: "other-secret",
    redirect_uris: values("--redirect"),
    grant_types: ["authorization_code", "client_credentials"],
    response_types: ["code"],
    token_endpoint_auth_method: "client_secret_basic",
    scope: "openid email profile groups",
  }],
  async findAccount(ctx, id) {
    const person = people[id];
    if (!person) return undefined;
    return {
      accountId: id,
      async claims() {
        return { sub: id, name: person.name, email: person.email, email_verified: true, groups: person.groups };
      },
    };
  },
  claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"], groups: ["groups"] },
  scopes: ["openid", "email", "profile", "groups", "api"],
  pkce: { required: () => true },
  // Every sign-in of a client allowed the grant gets a refresh token (no offline_access scope needed here).
  issueRefreshToken: async (ctx, client) => client.grantTypeAllowed("refresh_token"),
  jwks: { keys: [{ ...key, kid: "test-key-1", alg: "RS256", use: "sig" }] },
  cookies: { keys: [crypto.randomBytes(32).toString("hex")] },
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  features: {
    devInteractions: { enabled: false },
    introspection: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: (ctx, client, oneOf) => oneOf ?? undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resourceIndicator) => {
        const audience = { "urn:webhost": "webhost", "urn:other-api": "other-api" }[resourceIndicator];
        if (!audience) throw new errors.InvalidTarget();
        return { scope: "api", audience, accessTokenTTL: 3600, accessTokenFormat: "jwt", jwt: { sign: { alg: "RS256" } } };
      },
    },
    clientCredentials: { enabled: true },
    rpInitiatedLogout: {
      enabled: true,
      async logoutSource(ctx, form) {
        ctx.body = `<!doctype html><html><head><title>Sign out</title></head><body><h1>Sign out of the provider?</h1>${form}
<button type="submit" form="op.logoutForm" name="logout" value="yes" data-action="provider-sign-out">Yes, sign out</button></body></html>`;
      },
    },
  },
});

async function interaction(req, res) {
  const [, , uid, action] = new URL(req.url, issuer).pathname.split("/");
  const details = await provider.interactionDetails(req, res);
  if (details.uid !== uid) throw new Error("interaction mismatch");
  if (req.method === "GET") {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(signInPage("Test provider", uid));
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
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(signInPage("Test provider", uid, "Wrong login or password."));
    return;
  }
  const grant = new provider.Grant({ accountId: login, clientId: details.params.client_id });
  grant.addOIDCScope(String(details.params.scope));
  for (const indicator of [].concat(details.params.resource ?? [])) grant.addResourceScope(indicator, "api");
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { login: { accountId: login }, consent: { grantId } },
    { mergeWithLastSubmission: false });
}

const callback = provider.callback();
const handler = (req, res) => {
  if (req.method === "POST" && req.url.startsWith("/test/remove/")) {
    const login = decodeURIComponent(req.url.slice("/test/remove/".length));
    res.writeHead(delete people[login] ? 204 : 404).end();
    return;
  }
  if (req.method === "POST" && req.url.startsWith("/test/groups/")) {
    const login = decodeURIComponent(req.url.slice("/test/groups/".length));
    let body = "";
    req.on("data", (chunk) => { body += chunk; });
    req.on("end", () => {
      if (!people[login]) {
        res.writeHead(404).end();
        return;
      }
      people[login].groups = body.split(",").map((g) => g.trim()).filter(Boolean);
      res.writeHead(204).end();
    });
    return;
  }
  if (req.url.startsWith("/interaction/")) {
    interaction(req, res).catch((error) => {
      res.writeHead(400, { "content-type": "text/plain" }).end(`interaction failed: ${error.message}`);
    });
    return;
  }
  callback(req, res);
};

let listening = 0;
for (const host of ["127.0.0.1", "::1"]) {
  const server = http.createServer(handler);
  server.on("error", (error) => {
    if (host === "::1") return; // no IPv6 loopback here: 127.0.0.1 serves localhost
    throw error;
  });
  server.listen(port, host, () => {
    listening += 1;
    if (host === "127.0.0.1") console.log("ready");
  });
}
process.on("SIGTERM", () => process.exit(0));
