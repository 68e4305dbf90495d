// @ts-check
// MCP in the composer (contract §8.1, docs/chat.md "Resources and prompts in the composer"). `@` lists the resources
// (and resource templates) of the person's connected servers ([data-mention-item][data-server][data-uri]); choosing
// one reads it through their connection and attaches it (data-kind="resource"). `/` at the start lists the servers'
// prompts ([data-slash-item][data-server][data-prompt]); choosing one runs it into the conversation, after a form for
// its arguments when it has any (the workbench's, with completions: prompt-args-form.js). A refusal is one line;
// what was typed stays until what it asked for is done.

import { h } from "../html.js";
import { describeError } from "../rpc.js";
import { ItemSearch } from "../components/item-search.js";
import { promptArgsForm, templateArgsForm } from "../components/prompt-args-form.js";
import { expandTemplate, templateVariables } from "../uri-template.js";

/**
 * @typedef {object} ComposerMcpContext
 * @property {HTMLTextAreaElement} input
 * @property {{request: (method: string, params: Record<string, unknown>) => Promise<any>}} rpc
 * @property {(attachment: any) => void} attach a resource kept as a draft attachment
 * @property {(text: string) => void} say one line in the composer ("" clears it)
 * @property {(server: string, name: string, args: Record<string, unknown>) => Promise<void>} runPrompt
 */

/** @typedef {{ mode: "@" | "/", start: number, text: string }} Token what was typed for the list: "@que" / "/que" */

export class ComposerMcp {
  /** The form of a prompt's arguments (or a template's variables), above the composer (not in its form). */
  panel = h("section", { class: "chat-mcp-args", hidden: true, dataset: { testid: "chat-prompt-args" } });
  #ctx;
  search;
  /** @type {Token | null} */
  #token = null;
  /** @type {"@" | "/" | null} the list open */
  #mode = null;
  #seq = 0;

  /** @param {ComposerMcpContext} ctx */
  constructor(ctx) {
    this.#ctx = ctx;
    this.search = new ItemSearch({
      field: ctx.input,
      label: "Resources and prompts of your servers",
      text: (/** @type {any} */ item) => [item.title, item.name, item.uri, item.uriTemplate, item.server, item.description].join(" "),
      draw: (/** @type {any} */ item) => h("span", { class: "item-search-item" },
        h("span", { class: "item-search-title", text: String(item.title || item.name) }),
        h("span", { class: "item-search-sub muted", text: `${item.server} · ${item.uri ?? item.uriTemplate ?? item.description ?? ""}` })),
      attrs: (/** @type {any} */ item) => {
        /** @type {Record<string, string>} */
        const attrs = item.uri !== undefined || item.uriTemplate !== undefined
          ? { mentionItem: "", server: String(item.server), uri: String(item.uri ?? item.uriTemplate) }
          : { slashItem: "", server: String(item.server), prompt: String(item.name) };
        if (item.uriTemplate) attrs.template = "";
        return attrs;
      },
      choose: (/** @type {any} */ item) => { void this.#choose(item); },
    });
    // Before the composer's own keydown (Enter sends): the list takes the keys it uses while it is open.
    ctx.input.addEventListener("keydown", (ev) => { this.search.key(ev); });
    ctx.input.addEventListener("input", () => this.#update());
    ctx.input.addEventListener("click", () => this.#update());
    ctx.input.addEventListener("blur", () => { this.#mode = null; this.search.close(); });
    this.panel.addEventListener("keydown", (ev) => {
      if (ev.key === "Escape") {
        ev.preventDefault();
        ev.stopPropagation();
        this.closePanel();
        ctx.input.focus();
      }
    });
  }

  /** What is typed before the caret asks for a list: `/` at the very start, `@` after a space or at the start. */
  #update() {
    const input = this.#ctx.input;
    const before = input.value.slice(0, input.selectionStart ?? input.value.length);
    const slash = /^\/(\S*)$/.exec(before);
    const at = slash ? null : /(?:^|\s)@([^\s@]*)$/.exec(before);
    if (!slash && !at) {
      this.#token = null;
      this.#mode = null;
      this.search.close();
      return;
    }
    const mode = slash ? "/" : "@";
    const query = (slash ?? at)?.[1] ?? "";
    this.#token = { mode, start: before.length - query.length - 1, text: before.slice(before.length - query.length - 1) };
    if (this.#mode === mode && this.search.isOpen) {
      this.search.filter(query);
      return;
    }
    this.#mode = mode;
    void this.#load(mode, query);
  }

  /** @param {"@" | "/"} mode @param {string} query */
  async #load(mode, query) {
    const mine = ++this.#seq;
    const kind = mode === "@" ? "resources" : "prompts";
    this.search.open([], query, "Loading…");
    try {
      const listed = await this.#ctx.rpc.request("chat/composer/items", { kind });
      if (mine !== this.#seq || this.#mode !== mode) return;
      const items = Array.isArray(listed?.items) ? listed.items : [];
      const empty = mode === "@" ? "No resource of your connected servers matches" : "No prompt of your connected servers matches";
      this.search.open(items, this.#token?.text.slice(1) ?? query, empty);
    } catch (err) {
      if (mine === this.#seq) {
        this.search.close();
        this.#ctx.say(describeError(err));
      }
    }
  }

  /** @param {any} item */
  async #choose(item) {
    const token = this.#token;
    this.#mode = null;
    this.#ctx.say("");
    if (item.uriTemplate) this.#templateForm(item, token);
    else if (item.uri !== undefined) await this.#attach(String(item.server), String(item.uri), String(item.title || item.name || item.uri), token);
    else if (Array.isArray(item.arguments) && item.arguments.length) this.#promptForm(item, token);
    else {
      try {
        await this.#ctx.runPrompt(String(item.server), String(item.name), {});
        this.#drop(token);
      } catch (err) {
        this.#ctx.say(describeError(err));
      }
    }
  }

  /** @param {string} server @param {string} uri @param {string} name @param {Token | null} token */
  async #attach(server, uri, name, token) {
    try {
      const kept = await this.#ctx.rpc.request("chat/attach/resource", { server, uri, name });
      this.#ctx.attach(kept.attachment);
      this.#drop(token);
      return true;
    } catch (err) {
      this.#ctx.say(describeError(err));
      return false;
    }
  }

  /** Take what was typed for the list out of the composer, once what it asked for is done (if it is still there). @param {Token | null} token */
  #drop(token) {
    const input = this.#ctx.input;
    if (!token || input.value.slice(token.start, token.start + token.text.length) !== token.text) return;
    input.value = input.value.slice(0, token.start) + input.value.slice(token.start + token.text.length);
    input.setSelectionRange(token.start, token.start);
    input.dispatchEvent(new Event("input"));
  }

  /** @param {any} prompt @param {Token | null} token */
  #promptForm(prompt, token) {
    const form = promptArgsForm(String(prompt.server), prompt, {
      rpc: this.#ctx.rpc,
      completions: Boolean(prompt.completions),
      submitLabel: "Run prompt",
      submitAttrs: { "data-action": "run-prompt" },
      onSubmit: (values) => {
        form.setBusy(true);
        this.#ctx.runPrompt(String(prompt.server), String(prompt.name), values).then(() => {
          this.#drop(token);
          this.closePanel();
          this.#ctx.input.focus();
        }, (err) => form.showErrors([{ message: describeError(err) }])).finally(() => form.setBusy(false));
      },
    });
    this.#showPanel(`Prompt ${prompt.title || prompt.name}`, String(prompt.server), String(prompt.description ?? ""), form);
  }

  /** @param {any} template @param {Token | null} token */
  #templateForm(template, token) {
    const server = String(template.server);
    const names = templateVariables(String(template.uriTemplate));
    const form = templateArgsForm(server, String(template.uriTemplate), names, {
      rpc: this.#ctx.rpc,
      completions: Boolean(template.completions),
      submitLabel: "Attach",
      submitAttrs: { "data-action": "attach-resource" },
      onSubmit: (values) => {
        const uri = expandTemplate(String(template.uriTemplate), /** @type {Record<string, string>} */ (values));
        form.setBusy(true);
        this.#attach(server, uri, uri, token).then((done) => {
          if (done) {
            this.closePanel();
            this.#ctx.input.focus();
          }
        }).finally(() => form.setBusy(false));
      },
    });
    this.#showPanel(`Resource ${template.title || template.name}`, server, String(template.uriTemplate), form);
  }

  /** @param {string} title @param {string} server @param {string} note @param {{el: HTMLElement, focus: () => void}} form */
  #showPanel(title, server, note, form) {
    const cancel = h("button", { type: "button", class: "small ghost", text: "Cancel", dataset: { action: "cancel-prompt" } });
    cancel.addEventListener("click", () => { this.closePanel(); this.#ctx.input.focus(); });
    this.panel.setAttribute("aria-label", title);
    this.panel.replaceChildren(
      h("header", { class: "chat-mcp-args-head" }, h("strong", { text: title }), h("span", { class: "muted", text: ` on ${server}` }),
        h("span", { class: "spacer" }), cancel),
      h("p", { class: "muted chat-mcp-args-note", text: note, hidden: !note }),
      form.el);
    this.panel.hidden = false;
    form.focus();
  }

  closePanel() {
    this.panel.hidden = true;
    this.panel.replaceChildren();
  }
}
