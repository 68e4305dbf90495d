// The sign-in page and form reading shared by the test identity provider (oidc-provider.mjs) and the
// test authorization server (oauth-as.mjs): the same selectors, so tests drive both the same way.

export const escape = (text) => String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function signInPage(name, uid, error) {
  return `<!doctype html><html><head><title>${escape(name)}: sign in</title></head><body>
<h1>Sign in to the ${escape(name.toLowerCase())}</h1>${error ? `<p data-testid="provider-error">${escape(error)}</p>` : ""}
<form method="post" action="/interaction/${escape(uid)}/login">
<label>Login <input name="login" autocomplete="username"></label>
<label>Password <input name="password" type="password" autocomplete="current-password"></label>
<button type="submit" data-action="provider-sign-in">Sign in</button></form>
<form method="post" action="/interaction/${escape(uid)}/abort"><button type="submit" data-action="provider-deny">Deny</button></form>
</body></html>`;
}

export async function readForm(req) {
  let body = "";
  for await (const chunk of req) body += chunk;
  return new URLSearchParams(body);
}
