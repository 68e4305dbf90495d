// @ts-check
// What the apps in this conversation gave the model (ui/update-model-context), one chip per app instance:
// [data-model-context][data-server] with the app's name, a preview that opens the whole text, a note when
// it was cut to fit, and [data-action="remove"], which takes it out of the model's next requests.

import { h } from "../html.js";

const PREVIEW = 80;

export class ContextChips {
  el = h("div", { class: "chat-contexts", "aria-label": "What apps gave the model" });
  #remove;

  /** @param {(instance: string) => void} remove */
  constructor(remove) {
    this.#remove = remove;
    this.el.hidden = true;
  }

  /** The instances whose context the last request had to cut (maxContextChars), and that limit. */
  /** @type {{instances: string[], limit: number}} */
  #requestCut = { instances: [], limit: 0 };
  /** @type {any[]} */
  #contexts = [];

  /** The last request could not hold these contexts whole. @param {string[]} instances @param {number} limit */
  requestCut(instances, limit) {
    this.#requestCut = { instances, limit };
    this.set(this.#contexts);
  }

  /** @param {any[]} contexts */
  set(contexts) {
    this.#contexts = contexts;
    this.el.hidden = !contexts.length;
    this.el.replaceChildren(...contexts.map((c) => {
      const text = String(c.text ?? "");
      const preview = text.length > PREVIEW ? `${text.slice(0, PREVIEW)}…` : text;
      const remove = h("button", { type: "button", class: "small ghost", text: "Remove", dataset: { action: "remove" },
        "aria-label": `Remove what ${c.app} gave the model` });
      remove.addEventListener("click", () => this.#remove(String(c.instance)));
      return h("div", { class: "chat-context", dataset: { modelContext: String(c.instance), server: String(c.server) } },
        h("details", {},
          h("summary", {}, h("strong", { text: String(c.app) }), h("span", { class: "muted", text: ` ${preview}` })),
          h("pre", { class: "text-content", text }),
          c.cut ? h("p", { class: "chat-cut", text: `Cut to ${text.length} of ${c.fullChars} characters (maxAppContextChars).` }) : null,
          this.#requestCut.instances.includes(String(c.instance))
            ? h("p", { class: "chat-cut", dataset: { requestCut: "" },
              text: `Only part of it fit in the last request: all apps' context together is cut to ${this.#requestCut.limit} characters (maxContextChars).` })
            : null),
        remove);
    }));
  }
}
