// @ts-check
// Search over the person's own conversations (contract §8.1): input[type="search"][data-testid="chat-search"],
// its results in place of the list as [data-conversation] entries (title and the words around the match).
// The backend searches (chat/search: an index in memory, of this person only); each keystroke asks, and
// only the answer to the newest question is drawn.

import { h } from "../html.js";
import { describeError } from "../rpc.js";

/**
 * @typedef {object} SearchHost
 * @property {(method: string, params: Record<string, unknown>) => Promise<any>} request
 * @property {(id: string | null) => void} open
 */

export class SearchBox {
  el;
  #input = h("input", { type: "search", placeholder: "Search conversations", "aria-label": "Search conversations",
    name: "chat-search", maxLength: 200, dataset: { testid: "chat-search" } });
  #results = h("ul", { class: "chat-conversations chat-search-results", "aria-label": "Search results", hidden: true });
  #status = h("p", { class: "muted chat-search-status", role: "status" });
  #asked = 0;
  #host;

  /** @param {SearchHost} host @param {(searching: boolean) => void} onSearching */
  constructor(host, onSearching) {
    this.#host = host;
    this.el = h("div", { class: "chat-search", role: "search" }, this.#input, this.#status, this.#results);
    this.#input.addEventListener("input", () => {
      const query = this.#input.value.trim();
      onSearching(Boolean(query));
      this.#results.hidden = !query;
      if (!query) {
        this.#asked += 1;  // an answer still on its way is not drawn
        this.#results.replaceChildren();
        this.#status.textContent = "";
        return;
      }
      void this.#search(query);
    });
  }

  /** @param {string} query */
  async #search(query) {
    const asked = ++this.#asked;
    let found;
    try {
      found = await this.#host.request("chat/search", { query });
    } catch (err) {
      if (asked === this.#asked) this.#status.textContent = describeError(err);
      return;
    }
    if (asked !== this.#asked) return;
    const results = Array.isArray(found?.results) ? found.results : [];
    this.#status.textContent = results.length ? `${results.length} found` : "Nothing found";
    this.#results.replaceChildren(...results.map((/** @type {any} */ r) => {
      const open = h("button", { type: "button", class: "chat-conversation-title", text: String(r.title || "Untitled"),
        title: String(r.title || "") });
      open.addEventListener("click", () => this.#host.open(String(r.id)));
      return h("li", { class: "chat-conversation chat-search-result", dataset: { conversation: String(r.id) } },
        open, r.snippet ? h("p", { class: "muted chat-search-snippet", text: String(r.snippet) }) : "");
    }));
  }
}
