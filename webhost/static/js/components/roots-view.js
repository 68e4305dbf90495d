// @ts-check
// Roots (roots/get, roots/set): the file:// roots webhost gives servers that ask (`roots/list`): the
// configuration's, the ones an admin gives everyone, and the person's own. An admin edits everyone's; each
// person edits their own. Saving tells the person's servers (notifications/roots/list_changed where the era
// has it).
//
// Its selectors: [data-testid="roots-view"]; [data-roots-deprecated] says roots are deprecated (SEP-2577); [data-roots="effective" | "configured" | "shared" | "mine"] per
// list, each root a [data-root-uri] row; an editable list has one [data-root-row] per root (input[name="uri"],
// input[name="name"], [data-roots-action="remove"]), [data-roots-action="add"] and [data-roots-action="save"],
// and its result in [data-testid="roots-status"].

import { h, replaceChildren } from "../html.js";
import { describeError } from "../rpc.js";

/** @typedef {{uri: string, name?: string}} RootItem */

export class RootsView {
  #rpc;
  #status = h("p", { class: "muted", role: "status", dataset: { testid: "roots-status" } });
  #body = h("div", { class: "roots-body" });
  /** @type {any} */
  #view = null;
  el;

  /** @param {import("../rpc.js").RpcClient} rpc */
  constructor(rpc) {
    this.#rpc = rpc;
    this.el = h("article", { class: "view roots-view", dataset: { testid: "roots-view" } },
      h("header", { class: "view-head" },
        h("h2", { class: "view-title", text: "Roots" }),
        h("p", { class: "view-sub muted", text: "The folders (file:// URIs) webhost gives servers that ask for roots: the configuration's, the ones an admin gives everyone, and your own." }),
        // Kept working for the servers that ask; said plainly so nobody builds on it (SEP-2577, removal 2027 at the earliest).
        h("p", { class: "wh-note wh-note-info", dataset: { rootsDeprecated: "" },
          text: "Deprecated: MCP 2026-07-28 deprecates roots (SEP-2577). Servers that still ask for them get these; new servers should take folders as tool arguments instead." })),
      this.#status,
      this.#body);
    void this.refresh();
  }

  async refresh() {
    try {
      this.show(await this.#rpc.request("roots/get", {}));
    } catch (err) {
      this.#status.className = "inline-error";
      this.#status.textContent = `Could not read the roots: ${describeError(err)}`;
    }
  }

  /** The roots as the backend says they are now (roots/get, roots/set, a roots/changed notification). @param {any} view */
  show(view) {
    this.#view = view;
    const editing = this.#body.querySelector("[data-dirty]");
    if (editing) { // a list being edited is kept; only the lists around it are drawn again
      this.#drawReadOnly();
      return;
    }
    replaceChildren(this.#body,
      section("Given to your servers", "effective", list(view.effective, "No roots: servers that ask get an empty list.")),
      section("From the configuration", "configured", list(view.configured, "None (webhost.roots).")),
      view.canEditShared
        ? section("For everyone (admin)", "shared", this.#editor("shared", view.shared))
        : section("For everyone (set by an admin)", "shared", list(view.shared, "None.")),
      section("Your own", "mine", this.#editor("mine", view.mine)));
  }

  #drawReadOnly() {
    const view = this.#view;
    for (const [key, items, empty] of /** @type {const} */ ([["effective", view.effective, "No roots: servers that ask get an empty list."],
      ["configured", view.configured, "None (webhost.roots)."]])) {
      const slot = this.#body.querySelector(`[data-roots="${key}"]`);
      if (slot) replaceChildren(slot, list(items, empty));
    }
  }

  /** An editable list of roots with Add and Save. @param {"mine" | "shared"} scope @param {RootItem[]} items */
  #editor(scope, items) {
    const rows = h("ol", { class: "root-rows" });
    const form = h("form", { class: "roots-editor", dataset: { scope } });
    const addRow = (/** @type {RootItem} */ item) => {
      const remove = h("button", { type: "button", class: "small ghost", text: "Remove", dataset: { rootsAction: "remove" } });
      const row = h("li", { dataset: { rootRow: "" } },
        h("input", { name: "uri", type: "text", value: item.uri, placeholder: "file:///path/to/folder", "aria-label": "Root URI", required: true }),
        h("input", { name: "name", type: "text", value: item.name ?? "", placeholder: "name (optional)", "aria-label": "Root name" }),
        remove);
      remove.addEventListener("click", () => { row.remove(); form.dataset.dirty = "true"; });
      rows.append(row);
    };
    for (const item of items) addRow(item);
    const add = h("button", { type: "button", class: "small", text: "Add root", dataset: { rootsAction: "add" } });
    add.addEventListener("click", () => {
      addRow({ uri: "file:///" });
      form.dataset.dirty = "true";
      /** @type {HTMLInputElement | null} */ (rows.lastElementChild?.querySelector("input[name=uri]") ?? null)?.focus();
    });
    const save = h("button", { type: "submit", class: "small primary", text: "Save", dataset: { rootsAction: "save" } });
    form.addEventListener("input", () => { form.dataset.dirty = "true"; });
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const roots = [...rows.querySelectorAll("[data-root-row]")].map((row) => {
        const uri = /** @type {HTMLInputElement} */ (row.querySelector("input[name=uri]")).value.trim();
        const name = /** @type {HTMLInputElement} */ (row.querySelector("input[name=name]")).value.trim();
        return name ? { uri, name } : { uri };
      });
      save.disabled = true;
      this.#status.className = "muted";
      this.#status.textContent = "Saving…";
      try {
        const view = await this.#rpc.request("roots/set", { scope, roots });
        delete form.dataset.dirty;
        this.#status.textContent = scope === "shared" ? "Saved: everyone's servers are told." : "Saved: your servers are told.";
        this.show(view);
      } catch (err) {
        this.#status.className = "inline-error";
        this.#status.textContent = describeError(err);
      } finally {
        save.disabled = false;
      }
    });
    form.append(rows, h("div", { class: "roots-actions" }, add, save));
    return form;
  }
}

/** @param {string} title @param {string} key @param {HTMLElement} content */
function section(title, key, content) {
  return h("section", { class: "roots-section" }, h("h3", { text: title }), h("div", { dataset: { roots: key } }, content));
}

/** @param {RootItem[]} items @param {string} empty */
function list(items, empty) {
  if (!items?.length) return h("p", { class: "muted", text: empty });
  return h("ul", { class: "roots-list" }, items.map((r) => h("li", { dataset: { rootUri: r.uri } },
    h("code", { text: r.uri }), r.name ? h("span", { class: "muted", text: ` ${r.name}` }) : null)));
}
