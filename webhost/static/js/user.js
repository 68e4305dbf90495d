// The page header's signed-in person (contract §4): `[data-user]` with their display name and
// `data-role` = admin / member, from session/info's `user`. The sign-out control is a plain form
// in the page shell (oidc mode only): POST /auth/sign-out, allowed by the page CSP's form-action.

/**
 * @param {HTMLElement} slot the header's placeholder (#signed-in)
 * @param {unknown} user session/info `user`: {id, name, email, role}
 */
export function showUser(slot, user) {
  if (!user || typeof user !== "object") return;
  const { id, name, email, role } = /** @type {{id?: unknown, name?: unknown, email?: unknown, role?: unknown}} */ (user);
  const display = typeof name === "string" && name ? name : String(email ?? id ?? "");
  slot.textContent = display;
  slot.dataset.user = String(id ?? "");
  slot.dataset.role = role === "admin" ? "admin" : "member";
  slot.title = [typeof email === "string" ? email : "", role === "admin" ? "admin" : "member"].filter(Boolean).join(" · ");
  slot.hidden = false;
}
