// @ts-check
// The composer's attachments (contract §8.1, docs/chat.md "Attachments"): input[type="file"][data-testid="chat-attach"],
// each chosen file sent to webhost in chunks (chat/attach, chat/attach/chunk) and shown as [data-attachment]
// with data-name, data-kind (what webhost made of it: image / text; a server's resource chosen with `@`: resource)
// and [data-action="remove"]. A file
// webhost refuses is one line in the composer's notice; what was typed stays.

import { h } from "../html.js";

const CHUNK = 512 * 1024; // bytes of the file per chunk (its base64 stays under webhost's 1 MiB per chunk)

/** @typedef {{ id: string, name: string, kind: string, uri?: string, server?: string }} Attached */

/** @param {Uint8Array} bytes */
function base64(bytes) {
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
}

export class ComposerAttachments {
  #input = h("input", { type: "file", multiple: true, "aria-label": "Attach files", dataset: { testid: "chat-attach" } });
  #list = h("ul", { class: "chat-attachments", "aria-label": "Attached files" });
  el = h("div", { class: "chat-attach" }, this.#input, this.#list);
  /** @type {Attached[]} */
  #attached = [];
  #request;
  #say;

  /** @param {(method: string, params: Record<string, unknown>) => Promise<any>} request @param {(text: string) => void} say */
  constructor(request, say) {
    this.#request = request;
    this.#say = say;
    this.#list.hidden = true;
    this.#input.addEventListener("change", () => {
      const files = [...(/** @type {HTMLInputElement} */ (this.#input).files ?? [])];
      /** @type {HTMLInputElement} */ (this.#input).value = "";
      for (const file of files) void this.#upload(file);
    });
  }

  /** What chat/send names (a resource with where it came from). */
  list() { return this.#attached.map((a) => (a.uri ? { id: a.id, name: a.name, uri: a.uri, server: a.server } : { id: a.id, name: a.name })); }

  /** A resource read for `@` (composer-mcp.js), kept by webhost as a draft attachment. @param {any} kept */
  add(kept) {
    this.#attached.push({ id: String(kept.id), name: String(kept.name), kind: String(kept.kind), uri: String(kept.uri), server: String(kept.server) });
    this.#draw();
  }

  get count() { return this.#attached.length; }

  /** After a send: the chips go (the attachments now belong to the message). */
  clear() {
    this.#attached = [];
    this.#draw();
  }

  /** @param {File} file */
  async #upload(file) {
    try {
      const started = await this.#request("chat/attach", { name: file.name, size: file.size });
      let kept = null;
      for (let at = 0; at === 0 || at < file.size; at += CHUNK) {
        const bytes = new Uint8Array(await file.slice(at, at + CHUNK).arrayBuffer());
        const last = at + CHUNK >= file.size;
        kept = (await this.#request("chat/attach/chunk", { id: started.id, data: base64(bytes), last })).attachment;
      }
      if (kept) this.#attached.push({ id: String(kept.id), name: String(kept.name), kind: String(kept.kind) });
      this.#draw();
    } catch (err) {
      this.#say(err instanceof Error ? err.message : String(err));
    }
  }

  #draw() {
    this.#list.replaceChildren(...this.#attached.map((a) => {
      const remove = h("button", { type: "button", class: "small ghost", text: "×", "aria-label": `Remove ${a.name}`, dataset: { action: "remove" } });
      remove.addEventListener("click", () => {
        this.#attached = this.#attached.filter((other) => other !== a);
        void this.#request("chat/attach/remove", { id: a.id }).catch(() => {});
        this.#draw();
      });
      return h("li", { dataset: { attachment: "", name: a.name, kind: a.kind, ...(a.uri ? { uri: a.uri, server: a.server } : {}) },
        title: a.uri ? `${a.uri} (${a.server})` : undefined }, h("span", { text: a.name }), remove);
    }));
    this.#list.hidden = this.#attached.length === 0;
  }
}

/** A sent message's attachments, as its list shows them: [data-attachment] with data-name and data-kind.
 * @param {unknown} attachments */
export function sentAttachments(attachments) {
  const list = Array.isArray(attachments) ? attachments : [];
  const el = h("ul", { class: "chat-attachments", "aria-label": "Attached files" },
    ...list.map((/** @type {any} */ a) => h("li", { text: String(a.name), title: a.uri ? `${a.uri} (${a.server})` : undefined,
      dataset: { attachment: "", name: String(a.name), kind: String(a.kind), ...(a.uri ? { uri: String(a.uri) } : {}) } })));
  el.hidden = list.length === 0;
  return el;
}
