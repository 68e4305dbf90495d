// @ts-check
// The chat (contract §8): [data-testid="chat"]. The person's conversations on the left, the open one on
// the right: its messages as they stream (`chat/event` notifications), what apps gave the model, and the
// composer (Enter sends, Shift+Enter is a new line, Escape stops). Requests for the person's decision that
// belong to the open conversation (the model's tool calls to approve, an app's message, a server's input
// request caused by the model's call) are shown in it, inside the tool call they are about; the inbox
// keeps the others. With no model configured, it says how to add one ([data-testid="chat-setup"]).

import { h } from "../html.js";
import { matchParking } from "../park.js";
import { describeError } from "../rpc.js";
import { ConversationList } from "./conversation-list.js";
import { ContextChips } from "./context-chips.js";
import { ComposerAttachments } from "./composer-attachments.js";
import { ComposerMcp } from "./composer-mcp.js";
import { MessageView } from "./message-view.js";
import { showRequests } from "./request-dialog.js";
import { keyForm, setupNote } from "./chat-setup.js";
import { usagePanel } from "./usage-panel.js";
import { ToolPicker } from "./tool-picker.js";

const SCROLLING_KEYS = new Set(["ArrowUp", "ArrowDown", "PageUp", "PageDown", "Home", "End", " "]);

/** Whether a key press scrolls the page (a scrolling key, not typed into a field). @param {KeyboardEvent} ev */
function scrollingKey(ev) {
  const target = ev.target;
  if (target instanceof HTMLElement && (target.isContentEditable || target.matches("input, textarea, select"))) return false;
  return SCROLLING_KEYS.has(ev.key);
}

/**
 * @typedef {object} ChatContext
 * @property {import("../rpc.js").RpcClient} rpc
 * @property {import("../apps/index.js").Apps} apps
 * @property {(server: string, uri: string) => Promise<any>} readResource
 * @property {() => void} placementChanged the requests shown in the conversation change place (inbox.rehome)
 */

export class ChatView {
  el;
  /** The open conversation (null: a new one, not sent yet). @type {string | null} */
  conversationId = null;
  /** Whether the chat is what the page shows now. */
  visible = false;
  /** Told the conversation shown whenever it changes (the page's address keeps it). @type {(id: string | null) => void} */
  onOpen = () => {};
  #ctx;
  /** @type {any} */
  #info = null;
  #list;
  #chips;
  /** @type {Map<string, MessageView>} */
  #messages = new Map();
  #log = h("div", { class: "chat-log", role: "log", "aria-label": "Messages", tabIndex: 0 });
  #empty = h("div", { class: "chat-empty" }, h("p", { class: "muted", text: "Ask something. The model can call the tools of your connected servers; their apps open here." }));
  /** Requests for the person about this conversation that are not about one tool call (an app's message). */
  pending = h("div", { class: "chat-pending" });
  /** @type {ComposerAttachments} */ #attach;
  /** `@` and `/` in the composer. @type {ComposerMcp} */ #mcp;
  #notice = h("p", { class: "chat-notice", role: "status", hidden: true });
  #setup = h("div", { class: "chat-setup-slot" });
  #input = h("textarea", { rows: 3, placeholder: "Message the model… (Enter sends, Shift+Enter for a new line)",
    "aria-label": "Message", dataset: { testid: "chat-input" } });
  #send = h("button", { type: "submit", class: "primary", text: "Send", dataset: { action: "send" } });
  #stop = h("button", { type: "button", class: "ghost", text: "Stop", dataset: { action: "stop" }, disabled: true });
  #model = h("select", { name: "model", "aria-label": "Model" });
  #title = h("h2", { class: "chat-title", text: "New conversation" });
  /** On a phone the conversation list is a drawer (chat.css); this opens and closes it. */
  #drawerToggle = h("button", { type: "button", class: "small ghost chat-drawer-toggle", text: "Conversations",
    "aria-expanded": "false", "aria-controls": "chat-conversations", dataset: { action: "toggle-conversations" } });
  #running = false;
  /** What the model may use in this conversation ([data-testid="chat-tools"]). */
  #tools;
  /** Whether the person reads the end of the conversation (kept from their scrolling: reading the geometry at
   * each streamed event would force a layout of the whole page before the text can be drawn). */
  #atEnd = true;
  #scrollQueued = false;
  #followedTop = 0;
  /** When the person last used a scrolling input (wheel, touch, keys), and whether a pointer is held (a scrollbar
   * drag): a scroll up without one is the page's own doing (a frame focusing inside an app scrolls it into view). */
  #intentAt = -Infinity;
  #pointerHeld = false;
  // A message that grows after its last text (an app that sizes itself, an image that loads) is followed too.
  #grown = new ResizeObserver(() => this.#scrollToEnd(false));
  // So is the log's own box getting shorter (the composer or a notice below it growing).
  #boxed = new ResizeObserver(() => this.#scrollToEnd(false));
  /** An open in flight: events for it are in the snapshot it will bring, so they wait for it. */
  #opening = /** @type {string | null} */ (null);
  #loaded = false;
  /** The conversation asked for (the address, a click), until it is shown. @type {string | null} */
  #wanted = null;
  /** The message being edited (its text in the composer; sending makes a new version of it). @type {string | null} */
  #editing = null;
  #editNote = h("p", { class: "chat-editing", hidden: true });

  /** @param {ChatContext} ctx */
  constructor(ctx) {
    this.#ctx = ctx;
    // What scrolls is the log itself (chat.css; else the workspace or the document): scroll events, caught on the way down.
    document.addEventListener("scroll", (ev) => {
      if (!this.visible) return;
      const box = ev.target === document ? document.scrollingElement : ev.target;
      if (!(box instanceof Element) || !box.contains(this.#log)) return;
      // Stop following only when the person moved up: a scroll event that arrives after the log grew again (a slow
      // frame, an app sizing itself) is far from the end without anyone having scrolled away.
      if (box.scrollHeight - box.scrollTop - box.clientHeight < 80) this.#atEnd = true;
      else if (box.scrollTop < this.#followedTop - 1 && this.#personScrolls()) this.#atEnd = false;
      this.#followedTop = box.scrollTop;
    }, { capture: true, passive: true });
    const intent = () => { this.#intentAt = performance.now(); };
    for (const type of ["wheel", "touchmove"]) document.addEventListener(type, intent, { capture: true, passive: true });
    // Only keys that scroll, outside a field: Enter in the composer sends, and must not read as "the person
    // scrolled away" when the answer's app then scrolls itself into view.
    document.addEventListener("keydown", (ev) => { if (scrollingKey(ev)) intent(); }, { capture: true, passive: true });
    document.addEventListener("pointerdown", () => { this.#pointerHeld = true; }, { capture: true, passive: true });
    for (const type of ["pointerup", "pointercancel"]) document.addEventListener(type, () => { this.#pointerHeld = false; }, { capture: true, passive: true });
    this.#list = new ConversationList({
      request: (method, params) => ctx.rpc.request(method, params),
      say: (text) => this.#say(text),
      open: (id) => { this.#setDrawer(false); this.show(id); },
      rename: async (id, title) => { await this.#call("chat/rename", { conversationId: id, title }); },
      remove: async (id) => {
        await this.#call("chat/delete", { conversationId: id });
        if (id === this.conversationId) this.show(null);
      },
    });
    this.#tools = new ToolPicker(ctx.rpc, () => this.conversationId);
    this.#chips = new ContextChips((instance) => {
      if (this.conversationId) void this.#call("chat/context/remove", { conversationId: this.conversationId, instance });
    });
    this.#attach = new ComposerAttachments((method, params) => this.#ctx.rpc.request(method, params), (text) => this.#say(text));
    // Before the composer's keydown below: while `@` or `/` lists items, Enter and the arrows are the list's.
    this.#mcp = new ComposerMcp({
      input: /** @type {HTMLTextAreaElement} */ (this.#input),
      rpc: ctx.rpc,
      attach: (kept) => this.#attach.add(kept),
      say: (text) => this.#say(text),
      runPrompt: (server, name, args) => this.#runPrompt(server, name, args),
    });
    const composer = h("form", { class: "chat-composer", "aria-label": "Message the model" }, this.#editNote,
      this.#attach.el, this.#mcp.search.el, this.#input, h("div", { class: "chat-composer-actions" }, this.#model, h("span", { class: "spacer" }), this.#stop, this.#send));
    composer.addEventListener("submit", (ev) => { ev.preventDefault(); void this.#sendMessage(); });
    this.#input.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
        ev.preventDefault();
        void this.#sendMessage();
      }
    });
    this.#input.addEventListener("input", () => this.#updateControls());
    this.#stop.addEventListener("click", () => this.stop());
    this.#model.addEventListener("change", () => this.#drawSetup());
    const main = h("section", { class: "chat-main" },
      h("header", { class: "chat-head" }, this.#drawerToggle, this.#title, h("span", { class: "spacer" }), this.#tools.el),
      this.#setup, this.#chips.el, this.#log, this.pending, this.#notice, this.#mcp.panel, composer);
    this.#boxed.observe(this.#log);
    this.#list.el.append(usagePanel(ctx.rpc));
    this.#list.el.id = "chat-conversations";
    this.#drawerToggle.addEventListener("click", () => this.#setDrawer(this.el.dataset.drawer !== "open"));
    this.el = h("div", { class: "view chat-view", dataset: { testid: "chat" } }, this.#list.el, main);
    this.el.addEventListener("keydown", (ev) => {
      if (ev.key === "Escape" && this.el.dataset.drawer === "open" && !ev.defaultPrevented) {
        ev.preventDefault();
        this.#setDrawer(false);
        this.#drawerToggle.focus();
      } else if (ev.key === "Escape" && this.#running && !ev.defaultPrevented) {
        ev.preventDefault();
        this.stop();
      }
    });
    ctx.rpc.on("chat/event", (p) => this.#onEvent(p));
    ctx.rpc.on("chat/models", (p) => this.#modelsChanged(p));
    ctx.rpc.onState((state) => {
      // A new socket is a new backend session: everything is fetched again (events may have been missed).
      if (state === "open" && this.#loaded) void this.#reload(this.#wanted ?? this.conversationId);
    });
  }

  /** Show a conversation (null: a new one). @param {string | null} id */
  show(id) {
    this.#wanted = id;
    if (!this.#loaded) {
      this.#loaded = true;
      if (this.#ctx.rpc.state === "open") void this.#reload(id);  // else once the socket opens
      return;
    }
    if (id !== this.conversationId) void this.#open(id);
  }

  /** Open or close the conversation drawer (a phone's; wider screens always show the list). @param {boolean} open */
  #setDrawer(open) {
    this.el.dataset.drawer = open ? "open" : "closed";
    this.#drawerToggle.setAttribute("aria-expanded", String(open));
    if (open) /** @type {HTMLElement | null} */ (this.#list.el.querySelector("[aria-current], button"))?.focus();
  }

  /** Requests for the person may belong elsewhere now (the chat shown or not, another conversation). */
  placementChanged() {
    this.#ctx.placementChanged();
  }

  stop() {
    if (this.conversationId) void this.#call("chat/stop", { conversationId: this.conversationId });
  }

  /** Where a request for the person belongs in the open conversation, or null (the inbox). @param {any} req */
  placeFor(req) {
    const conversation = req?.origin?.conversationId ?? req?.detail?.conversationId;
    if (!this.visible || !conversation || conversation !== this.conversationId) return null;
    const callId = req?.origin?.chatCallId ?? (req?.kind === "model-tool-call" ? req?.detail?.callId : null);
    for (const view of this.#messages.values()) {
      const card = callId ? view.cards.get(String(callId)) : undefined;
      if (card) return card.slot;
    }
    return this.pending;
  }

  async #reload(id = this.conversationId) {
    try {
      this.#info = await this.#ctx.rpc.request("chat/info", {});
    } catch (err) {
      this.#say(describeError(err));
      return;
    }
    this.#drawModels();
    await this.#refreshList();
    await this.#open(id, true);
  }

  async #refreshList() {
    try {
      const listed = await this.#ctx.rpc.request("chat/list", {});
      const conversations = Array.isArray(listed?.conversations) ? listed.conversations : [];
      this.#list.set(conversations);
      // The open one's title may have changed (written by the model after the first answer, or renamed elsewhere).
      const open = conversations.find((/** @type {any} */ c) => c.id === this.conversationId);
      if (open && this.#opening !== open.id) this.#title.textContent = String(open.title);
    } catch (err) {
      this.#say(describeError(err));
    }
  }

  /** @param {string | null} id @param {boolean} [force] */
  async #open(id, force = false) {
    if (id === this.conversationId && !force) return;
    this.#wanted = null;
    this.#edit(null);
    await this.#clear();
    this.conversationId = id;
    this.onOpen(id);
    this.#list.setActive(id);
    this.#title.textContent = "New conversation";
    this.placementChanged();
    if (id === null) this.#tools.reset();
    void this.#tools.load();
    if (id === null) {
      this.#running = false;
      this.#drawModels();
      this.#updateControls();
      return;
    }
    this.#opening = id;
    try {
      const opened = await this.#ctx.rpc.request("chat/open", { conversationId: id });
      if (this.conversationId !== id) return;
      this.#title.textContent = String(opened.conversation?.title ?? "Conversation");
      if (opened.conversation?.model) this.#selectModel(String(opened.conversation.model));
      for (const message of opened.messages ?? []) this.#upsertMessage(message);
      this.#chips.set(opened.contexts ?? []);
      this.#running = Boolean(opened.running);
    } catch (err) {
      this.#say(describeError(err));
    } finally {
      if (this.#opening === id) this.#opening = null;
    }
    this.placementChanged();
    this.#updateControls();
    this.#scrollToEnd(true);
  }

  /** Leave the conversation shown: its apps are torn down (a conversation reopened shows them again). */
  async #clear() {
    const old = [...this.#messages.values()];
    this.#messages.clear();
    this.#chips.set([]);
    this.#say("");
    this.#grown.disconnect();
    this.#log.replaceChildren(this.#empty);
    await Promise.all(old.map((view) => this.#ctx.apps.release(view.el, "the conversation was closed in this tab")));
  }

  /** @param {any} p */
  #onEvent(p) {
    if (!p || typeof p !== "object") return;
    if (p.type === "conversations") {
      void this.#refreshList();
      return;
    }
    if (p.conversationId !== this.conversationId || this.#opening === p.conversationId) return;
    if (p.type === "message") {
      this.#upsertMessage(p.message);
      if (p.message?.role === "assistant") {
        this.#running = p.message.status === "streaming";
        this.#updateControls();
        if (!this.#running) void this.#refreshList();
      }
    } else if (p.type === "text") {
      this.#messages.get(String(p.messageId))?.appendText(String(p.delta ?? ""));
    } else if (p.type === "call") {
      this.#messages.get(String(p.messageId))?.upsertCall(p.call);
      this.placementChanged();
    } else if (p.type === "args") {
      this.#messages.get(String(p.messageId))?.partialArgs(String(p.callId), p.partial ?? {});
    } else if (p.type === "progress") {
      this.#messages.get(String(p.messageId))?.progress(p);
    } else if (p.type === "branch") {
      this.#showBranch(Array.isArray(p.messages) ? p.messages : []);
    } else if (p.type === "contexts-cut") {
      this.#chips.requestCut(Array.isArray(p.instances) ? p.instances.map(String) : [], Number(p.limit) || 0);
    } else if (p.type === "removed") {
      const view = this.#messages.get(String(p.messageId));
      this.#messages.delete(String(p.messageId));
      if (view) void this.#ctx.apps.release(view.el, "the answer was asked again").then(() => view.el.remove());
    } else if (p.type === "contexts") {
      this.#chips.set(Array.isArray(p.contexts) ? p.contexts : []);
      matchParking(this.#chips.el);
    }
    this.#scrollToEnd(false);
  }

  /** @param {any} message @param {Element | null} [after] where a new one goes (else at the end) */
  #upsertMessage(message, after = null) {
    if (!message?.id) return;
    const existing = this.#messages.get(String(message.id));
    if (existing) {
      existing.update(message);
      return;
    }
    const view = new MessageView(message, {
      apps: {
        open: (p) => this.#ctx.apps.openChatApp({ ...p, conversationId: /** @type {string} */ (this.conversationId) }),
        readResource: this.#ctx.readResource,
      },
      retry: () => { if (this.conversationId) void this.#call("chat/retry", { conversationId: this.conversationId, model: this.#model.value || undefined }); },
      showRequest: (m) => { if (this.conversationId) void showRequests(this.#ctx.rpc, this.conversationId, String(m.id)); },
      edit: (m) => this.#edit(m),
      regenerate: (m) => {
        if (this.conversationId) void this.#call("chat/regenerate", { conversationId: this.conversationId, messageId: String(m.id), model: this.#model.value || undefined });
      },
      showVersion: (m, index) => {
        if (this.conversationId) void this.#call("chat/branch", { conversationId: this.conversationId, messageId: String(m.id), index });
      },
    });
    this.#messages.set(String(message.id), view);
    this.#empty.remove();
    if (after) after.after(view.el);
    else this.#log.append(view.el);
    this.#grown.observe(view.el);
    matchParking(view.el);
  }

  /** Another branch is shown: the messages that left it go (their apps with them), those new to it are drawn
   * where they belong; those in both stay as they are (an app in them is not reloaded). @param {any[]} messages */
  #showBranch(messages) {
    const wanted = new Set(messages.map((m) => String(m.id)));
    for (const [id, view] of this.#messages) {
      if (wanted.has(id)) continue;
      this.#messages.delete(id);
      void this.#ctx.apps.release(view.el, "another version of the conversation is shown").then(() => view.el.remove());
      view.el.hidden = true;
    }
    /** @type {Element | null} */
    let after = null;
    for (const message of messages) {
      const id = String(message.id);
      let view = this.#messages.get(id);
      if (!view) {
        this.#upsertMessage(message, after);
        view = /** @type {MessageView} */ (this.#messages.get(id));
      } else view.update(message);
      view.setBranch(message.branch ?? null);
      after = view.el;
    }
    if (this.#editing && !wanted.has(this.#editing)) this.#edit(null);
    this.placementChanged();
  }

  /** Edit a message (null: stop editing). @param {any} message */
  #edit(message) {
    this.#editing = message ? String(message.id) : null;
    this.#editNote.hidden = !message;
    if (!message) return;
    const cancel = h("button", { type: "button", class: "small ghost", text: "Cancel", dataset: { action: "cancel-edit" } });
    cancel.addEventListener("click", () => { this.#edit(null); this.#input.value = ""; this.#updateControls(); });
    this.#editNote.replaceChildren("Editing a message: sending replaces it and what follows (they stay as another version). ", cancel);
    this.#input.value = String(message.text ?? "");
    this.#updateControls();
    this.#input.focus();
  }

  async #sendMessage() {
    const text = this.#input.value.trim();
    if ((!text && !this.#attach.count) || this.#running || this.#send.disabled) return;
    this.#send.disabled = true;
    this.#say("");
    const fresh = this.conversationId === null;
    // Cleared now, not when the backend answers: what the person types meanwhile is theirs, and is kept.
    const typed = this.#input.value;
    this.#input.value = "";
    try {
      const editing = this.#editing && this.conversationId ? { conversationId: this.conversationId, messageId: this.#editing } : null;
      const sent = editing
        ? await this.#ctx.rpc.request("chat/edit", { ...editing, text, model: this.#model.value || undefined })
        : await this.#ctx.rpc.request("chat/send", {
          conversationId: this.conversationId ?? undefined, text, model: this.#model.value || undefined,
          tools: fresh ? this.#tools.draft ?? undefined : undefined,
          attachments: this.#attach.count ? this.#attach.list() : undefined,
        });
      if (!editing) this.#attach.clear();
      this.#edit(null);
      if (fresh) {
        await this.#open(String(sent.conversationId));
        void this.#refreshList();
      }
    } catch (err) {
      this.#say(describeError(err));
      this.#input.value = this.#input.value ? `${typed}\n${this.#input.value}` : typed;  // not sent: nothing lost
    } finally {
      this.#updateControls();
    }
    // Back to the composer unless something took focus while the send was answered (an approval that
    // arrived meanwhile keeps it: Enter allows).
    const active = document.activeElement;
    if (!active || active === document.body || active === this.#send || active === this.#input) this.#input.focus();
  }

  /** Run an MCP prompt into the conversation (`/`); a refusal is thrown to the arguments form.
   * @param {string} server @param {string} name @param {Record<string, unknown>} args */
  async #runPrompt(server, name, args) {
    const fresh = this.conversationId === null;
    const sent = await this.#ctx.rpc.request("chat/prompt/run", {
      server, name, arguments: args, conversationId: this.conversationId ?? undefined, model: this.#model.value || undefined,
      tools: fresh ? this.#tools.draft ?? undefined : undefined,
    });
    if (fresh) {
      await this.#open(String(sent.conversationId));
      void this.#refreshList();
    }
  }

  /** @param {string} method @param {Record<string, unknown>} params */
  async #call(method, params) {
    try {
      return await this.#ctx.rpc.request(method, params);
    } catch (err) {
      this.#say(describeError(err));
      return null;
    }
  }

  #drawModels() {
    const models = Array.isArray(this.#info?.models) ? this.#info.models : [];
    const ids = models.map((/** @type {any} */ m) => String(m.id));
    // The choice made stays while it is offered; one no longer offered falls back to the default, never kept.
    const chosen = [this.#model.value, this.#info?.defaultModel].find((id) => id && ids.includes(id)) ?? ids[0] ?? "";
    this.#model.replaceChildren(...models.map((/** @type {any} */ m) =>
      h("option", { value: String(m.id), text: `${m.label ?? m.id}` })));
    this.#selectModel(chosen);
    this.#drawSetup();
  }

  /** The person's models changed under the open page (their groups, or `webhost reload`): the choice follows,
   * and a chosen model taken away is said, not silently swapped. @param {any} info what `chat/info` answers now */
  #modelsChanged(info) {
    if (!this.#info || !info || typeof info !== "object") return; // not drawn yet: its `chat/info` reads them
    const before = this.#model.value;
    const label = this.#model.selectedOptions[0]?.textContent ?? before;
    this.#info = info;
    this.#drawModels();
    if (!before || this.#model.value === before) return;
    const now = this.#model.selectedOptions[0]?.textContent;
    this.#say(now
      ? `The model ${label} is no longer available to you; the chat now uses ${now}.`
      : `The model ${label} is no longer available to you, and no other model is.`);
  }

  /** @param {string} id */
  #selectModel(id) {
    if ([...this.#model.options].some((o) => o.value === id)) this.#model.value = id;
    this.#drawSetup();
  }

  #drawSetup() {
    const models = Array.isArray(this.#info?.models) ? this.#info.models : [];
    const model = models.find((/** @type {any} */ m) => m.id === this.#model.value);
    if (!this.#info) this.#setup.replaceChildren();
    else if (!models.length) this.#setup.replaceChildren(setupNote());
    else if (model?.needsKey) {
      this.#setup.replaceChildren(keyForm(model, this.#ctx.rpc, () => { void this.#reload(); }));
    } else this.#setup.replaceChildren();
    this.#model.hidden = models.length === 0;
    this.#updateControls();
  }

  #updateControls() {
    const models = Array.isArray(this.#info?.models) ? this.#info.models : [];
    const model = models.find((/** @type {any} */ m) => m.id === this.#model.value);
    const ready = Boolean(model) && !model.needsKey;
    this.#send.disabled = !ready || this.#running || !this.#input.value.trim();
    this.#stop.disabled = !this.#running;
    this.#input.disabled = !ready;
    this.el.dataset.running = String(this.#running);
  }

  /** @param {string} text */
  #say(text) {
    this.#notice.hidden = !text;
    this.#notice.textContent = text;
  }

  /** The element that scrolls the conversation: its own log (chat.css), else the workspace or the document. */
  #scroller() {
    if (getComputedStyle(this.#log).overflowY !== "visible") return this.#log;
    const workspace = this.#log.closest(".workspace");
    if (workspace && getComputedStyle(workspace).overflowY !== "visible") return workspace;
    return document.scrollingElement ?? document.documentElement;
  }

  /** Whether a scroll now comes from the person (an input of theirs in the last moment, or a held pointer). */
  #personScrolls() {
    return this.#pointerHeld || performance.now() - this.#intentAt < 1500;
  }

  /** Follow the newest text when the person is reading the end. @param {boolean} always */
  #scrollToEnd(always) {
    if (always) this.#atEnd = true;
    if (!this.#atEnd || this.#scrollQueued) return;
    this.#scrollQueued = true;
    requestAnimationFrame(() => {
      this.#scrollQueued = false;
      if (!this.#atEnd || !this.visible) return;
      const box = this.#scroller();
      box.scrollTop = box.scrollHeight;
      this.#followedTop = box.scrollTop;
    });
  }
}
