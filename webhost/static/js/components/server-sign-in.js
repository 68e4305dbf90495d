// @ts-check
// Signing in to a remote server that needs it (contract §6): for status "auth-required", the reason in
// words and Sign in ([data-action="sign-in"]), which opens the authorization server in a new window from
// the click itself (a blank window first, so no popup blocker stops it; it has no opener) and then sends
// it to the URL `servers/signIn` answers. Once signed in, Sign out of this server
// ([data-action="sign-out-server"]) forgets the person's tokens (`servers/signOut`). No token reaches the page.

import { h } from "../html.js";
import { describeError } from "../rpc.js";

/**
 * @param {string} server
 * @param {any} state the server's state (status, error = the reason, signIn = {signedIn, waiting})
 * @param {import("../rpc.js").RpcClient} rpc
 * @param {(state: any) => void} update called with the server state an action answered
 * @returns {HTMLElement | null}
 */
export function serverSignIn(server, state, rpc, update) {
  const signIn = state.signIn;
  if (!signIn) return null;
  const error = h("p", { class: "form-error", role: "alert", hidden: true, dataset: { testid: "sign-in-error" } });
  if (state.status === "auth-required") {
    const button = h("button", { type: "button", class: "small primary", text: "Sign in", dataset: { action: "sign-in" } });
    button.addEventListener("click", async () => {
      const popup = window.open("about:blank", "_blank");
      if (popup) popup.opener = null;
      button.disabled = true;
      error.hidden = true;
      try {
        const result = await rpc.request("servers/signIn", { server });
        if (result?.url && popup) popup.location.href = result.url;
        else if (result?.url) window.open(result.url, "_blank", "noopener");
        else popup?.close();
        if (result?.server) update(result.server);
      } catch (err) {
        popup?.close();
        error.textContent = describeError(err);
        error.hidden = false;
      } finally {
        button.disabled = false;
      }
    });
    return h("div", { class: "card server-sign-in", dataset: { testid: "server-sign-in" } },
      h("p", { class: "field-help", dataset: { testid: "sign-in-reason" }, text: String(state.error || `${server} asks you to sign in`) }),
      error, h("div", { class: "form-actions" }, button));
  }
  if (!signIn.signedIn) return null;
  const out = h("button", { type: "button", class: "small", text: "Sign out of this server", dataset: { action: "sign-out-server" } });
  out.addEventListener("click", async () => {
    out.disabled = true;
    try {
      const result = await rpc.request("servers/signOut", { server });
      if (result?.server) update(result.server);
      if (result?.note) { error.textContent = String(result.note); error.hidden = false; }
    } catch (err) {
      error.textContent = describeError(err);
      error.hidden = false;
    } finally {
      out.disabled = false;
    }
  });
  return h("div", { class: "server-sign-out" }, out, error);
}
