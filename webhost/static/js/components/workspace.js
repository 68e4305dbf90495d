// @ts-check
// The main area: shows one open item (tool, resource, template, prompt, server details, the audit
// log, the apps overview, the live sessions).
//
// Tool views are kept per tool, and they stay IN THE DOCUMENT when you look at something else:
// a detached iframe loses its browsing context, so detaching a tool view would kill its MCP App
// ("closed (removed from the page)"). Instead the views you switched away from are parked
// (../park.js): invisible, inert, and with their automation attributes renamed, so
// [data-testid="tool-result"], [data-testid="call-tool"], [name=ARG] and iframe[data-app-frame]
// resolve to the visible open tool only. A tool view leaves the document only when it is closed
// (its Close button) or its server is removed, and only after apps.release() tore its apps down.

import { h } from "../html.js";
import { park, unpark, isParked, releaseThenRemove } from "../park.js";
import { ToolView } from "./tool-view.js";
import { resourceView, templateView } from "./resource-view.js";
import { promptView } from "./prompt-view.js";
import { ServerDetails } from "./server-details.js";
import { AuditView } from "./audit-view.js";
import { AppsView } from "./apps-view.js";
import { SessionsView } from "./sessions-view.js";
import { AdminView } from "./admin-view.js";
import { RootsView } from "./roots-view.js";
import { TasksView } from "./tasks-view.js";

/**
 * @typedef {object} WorkspaceContext
 * @property {import("../rpc.js").RpcClient} rpc
 * @property {import("../apps/index.js").Apps} apps
 * @property {(callId: string) => void} onCallDone a tool call ended
 * @property {Map<string, import("./call-result.js").CallResult>} calls
 * @property {(name: string) => import("./server-card.js").ServerCard | undefined} card
 * @property {() => import("./server-card.js").ServerCard[]} cards every configured server, in order
 * @property {(server: string | null, kind: string | null, key: string | null) => void} onActive
 * @property {import("../chat/chat-view.js").ChatView} chat the chat, kept in the page (parked when not shown)
 */

/** @typedef {"tool" | "resource" | "template" | "prompt" | "server" | "audit" | "apps" | "sessions" | "chat" | "roots" | "tasks" | "admin"} ViewKind */

// The open item is kept in the address (`#kind=tool&server=S&key=NAME`), so a reload (or a link) opens it
// again once its server has listed it; the form's values go to sessionStorage (this tab only, never the URL).
const KINDS = ["tool", "resource", "template", "prompt", "server", "audit", "apps", "sessions", "chat", "roots", "tasks", "admin"];
/** Views that stand for the whole page, not one server's item. */
const PAGE_VIEWS = ["audit", "apps", "sessions", "chat", "roots", "tasks", "admin"];
const FORM_KEY = "webhost:form:";

/** @returns {{kind: ViewKind, server: string, key: string} | null} */
function openFromUrl() {
  const params = new URLSearchParams(location.hash.slice(1));
  const kind = params.get("kind");
  if (!kind || !KINDS.includes(kind)) return null;
  return { kind: /** @type {ViewKind} */ (kind), server: params.get("server") ?? "", key: params.get("key") ?? "" };
}

/** @param {{kind: string, server: string, key: string} | null} open */
function keepInUrl(open) {
  let hash = open ? `#${new URLSearchParams({ kind: open.kind, server: open.server, key: open.key })}` : "";
  // Chat-first (a model is configured: index.html's data-landing): the bare address is the chat's new
  // conversation, the landing view, so the workbench's welcome is the one that needs a name (main.js reads it).
  if (document.body.dataset.landing === "chat") {
    if (open?.kind === "chat" && !open.key) hash = "";
    else if (!open) hash = "#kind=workbench";
  }
  if (location.hash !== hash) history.replaceState(history.state, "", `${location.pathname}${location.search}${hash}`);
}

export class Workspace {
  #ctx;
  /** @type {Map<string, ToolView>} */
  #tools = new Map();
  /** Endings of calls run elsewhere (`calls/outcome`) for tools not opened yet, by server and tool. @type {Map<string, any>} */
  #outcomes = new Map();
  /** Calls still running that this tab did not start (a reload's), for tools not opened yet. @type {Map<string, any>} */
  #running = new Map();
  /** @type {{kind: ViewKind | "welcome", server: string, key: string, view?: any} | null} */
  #open = null;
  /** The shown non-tool item (welcome, resource, prompt, …): replaced on every open. @type {{el: HTMLElement, view?: any} | null} */
  #other = null;
  el = h("div", { class: "workspace-inner" });
  /** What the address asked to open, until its server lists it. */
  #restore = openFromUrl();

  /** @param {WorkspaceContext} ctx */
  constructor(ctx) {
    this.#ctx = ctx;
    this.readResource = (/** @type {string} */ server, /** @type {string} */ uri, /** @type {Record<string, unknown> | null | undefined} */ meta = null) =>
      ctx.rpc.request("resources/read", { server, uri, ...(meta ? { _meta: meta } : {}) });
    const restore = this.#restore;
    this.showWelcome();
    this.#restore = restore;
    if (restore && PAGE_VIEWS.includes(restore.kind)) {
      this.#restore = null;
      queueMicrotask(() => this.open(restore.kind, "", restore.kind === "chat" ? restore.key : undefined));
    }
    // The chat says which conversation it shows: the address follows, so a reload opens it again.
    ctx.chat.onOpen = (id) => {
      if (this.#open?.kind !== "chat") return;
      this.#open.key = id ?? "";
      keepInUrl({ kind: "chat", server: "", key: id ?? "" });
    };
    // Leaving (a reload): the open form's values, for this tab to show again.
    addEventListener("pagehide", () => this.#keepFormValues());
  }

  #keepFormValues() {
    const open = this.#open;
    if (!open || (open.kind !== "tool" && open.kind !== "prompt")) return;
    const view = open.kind === "tool" ? this.#tools.get(`${open.server}\n${open.key}`) : open.view;
    const values = view?.values?.();
    try {
      if (values) sessionStorage.setItem(`${FORM_KEY}${open.kind}:${open.server}:${open.key}`, JSON.stringify(values));
    } catch { /* storage full or off: the form starts from its defaults */ }
  }

  /** @param {string} kind @param {string} server @param {string} key @returns {Record<string, unknown> | null} */
  #keptFormValues(kind, server, key) {
    try {
      const text = sessionStorage.getItem(`${FORM_KEY}${kind}:${server}:${key}`);
      const value = text ? JSON.parse(text) : null;
      return value && typeof value === "object" && !Array.isArray(value) ? value : null;
    } catch {
      return null;
    }
  }

  showWelcome() {
    this.#show(h("div", { class: "welcome" },
      h("h2", { text: "Welcome to webhost" }),
      h("p", { class: "muted", text: "Pick a tool, resource or prompt from a server on the left. Calls, server requests and everything on the wire show up in the activity log below." })));
    this.#open = null;
    this.#restore = null;
    keepInUrl(null);
    this.#chatShown(false, "");
    this.#ctx.onActive(null, null, null);
  }

  /**
   * @param {ViewKind} kind
   * @param {string} server @param {any} [item]
   */
  open(kind, server, item) {
    const ctx = this.#ctx;
    const caps = (/** @type {string} */ name) => ctx.card(name)?.state?.capabilities ?? {};
    /** @type {HTMLElement} */
    let el;
    let key = "";
    /** @type {any} */
    let view = null;
    if (kind === "tool") {
      key = String(item.name);
      const id = `${server}\n${key}`;
      let tv = this.#tools.get(id);
      if (tv) tv.update(item);
      else {
        tv = new ToolView(server, item, {
          rpc: ctx.rpc, apps: ctx.apps, calls: ctx.calls, readResource: this.readResource, onCallDone: ctx.onCallDone,
          close: () => { void this.closeTool(server, key); },
        });
        this.#tools.set(id, tv);
        const running = this.#running.get(id);
        this.#running.delete(id);
        if (running) tv.showRunning(running);
        const outcome = this.#outcomes.get(id);
        this.#outcomes.delete(id);
        if (outcome) tv.showOutcome(outcome);
      }
      el = tv.el;
      view = tv;
    } else if (kind === "resource") {
      key = String(item.uri);
      view = resourceView(server, item, this.readResource, { rpc: ctx.rpc, subscribe: Boolean(caps(server).resources?.subscribe) });
      el = view.el;
    } else if (kind === "template") {
      key = String(item.uriTemplate);
      el = templateView(server, item, this.readResource, { rpc: ctx.rpc, completions: Boolean(caps(server).completions) });
    } else if (kind === "prompt") {
      key = String(item.name);
      view = promptView(server, item, { rpc: ctx.rpc, readResource: this.readResource, completions: Boolean(caps(server).completions) });
      el = view.el;
    } else if (kind === "audit") {
      view = new AuditView(ctx.rpc, () => ctx.cards().map((c) => c.name));
      el = view.el;
    } else if (kind === "chat") {
      key = typeof item === "string" ? item : "";
      view = ctx.chat;
      el = ctx.chat.el;
    } else if (kind === "sessions") {
      view = new SessionsView(ctx.rpc);
      el = view.el;
    } else if (kind === "admin") {
      view = new AdminView(ctx.rpc);
      el = view.el;
    } else if (kind === "roots") {
      view = new RootsView(ctx.rpc);
      el = view.el;
    } else if (kind === "tasks") {
      view = new TasksView(ctx.rpc);
      el = view.el;
    } else if (kind === "apps") {
      view = new AppsView({
        apps: ctx.apps,
        cards: ctx.cards,
        openTool: (/** @type {string} */ s, /** @type {any} */ tool) => this.open("tool", s, tool),
        showApp: (/** @type {any} */ app) => this.showApp(app),
      });
      el = view.el;
    } else {
      const card = ctx.card(server);
      if (!card) return;
      view = new ServerDetails(card);
      el = view.el;
    }
    this.#show(el, kind === "tool" || kind === "chat" ? undefined : view);
    this.#open = { kind, server, key, view };
    this.#restore = null;
    keepInUrl({ kind, server, key });
    this.#chatShown(kind === "chat", key);
    ctx.onActive(PAGE_VIEWS.includes(kind) ? null : server, kind, key);
    this.el.parentElement?.scrollTo({ top: 0 });
    // Stacked layout: the sidebar sits above the workspace, so bring the opened item into view.
    if (matchMedia("(max-width: 900px)").matches) this.el.scrollIntoView({ block: "start" });
    const heading = /** @type {HTMLElement | null} */ (el.querySelector("h2"));
    if (heading) {
      heading.tabIndex = -1;
      heading.focus({ preventScroll: true });
    }
  }

  /**
   * Show `el`: park every other tool view, drop the previous non-tool item.
   * @param {HTMLElement} el @param {any} [view] a non-tool view (disposed when replaced)
   */
  #show(el, view) {
    for (const tv of this.#tools.values()) if (tv.el !== el && !isParked(tv.el)) parkToolView(tv.el, this.#ctx.apps);
    const chat = this.#ctx.chat.el;
    if (chat !== el && chat.isConnected && !isParked(chat)) parkToolView(chat, this.#ctx.apps);
    if (this.#other && this.#other.el !== el) {
      this.#other.view?.dispose?.();
      this.#other.el.remove();
      this.#other = null;
    }
    const kept = el === chat || [...this.#tools.values()].some((tv) => tv.el === el);
    if (!kept) this.#other = { el, view };
    if (el.parentNode !== this.el) this.el.append(el);
    unpark(el);
  }

  /** The conversation the chat shows (to open the chat on it again), or "". */
  chatConversation() {
    return this.#ctx.chat.conversationId ?? "";
  }

  /** The chat became what the page shows (with conversation `key`), or stopped being it. @param {boolean} shown @param {string} key */
  #chatShown(shown, key) {
    const chat = this.#ctx.chat;
    const was = chat.visible;
    chat.visible = shown;
    if (shown) chat.show(key || null);
    if (shown !== was) chat.placementChanged();
  }

  /**
   * Bring an open app into view: its tool view is shown first when it lives in a parked one.
   * @param {{element: HTMLElement, focus: () => void}} app an AppHandle from apps.list()
   */
  showApp(app) {
    if (this.#ctx.chat.el.contains(app.element)) {
      this.open("chat", "", this.#ctx.chat.conversationId ?? "");
      app.focus();
      return;
    }
    for (const [id, tv] of this.#tools) {
      if (tv.el.contains(app.element)) {
        const [server] = id.split("\n");
        this.open("tool", server, tv.tool);
        break;
      }
    }
    app.focus();
  }

  /** A server's state or lists changed. @param {import("./server-card.js").ServerCard} card */
  cardChanged(card) {
    this.#restoreFrom(card);
    const open = this.#open;
    if (open?.kind === "apps") open.view.refresh();
    if (!open || open.server !== card.name) return;
    if (open.kind === "server") open.view.refresh();
    if (open.kind === "tool") {
      const tool = card.lists.tools.items.find((t) => t?.name === open.key);
      if (tool) open.view.update(tool);
    }
  }

  /** The item the address named, once its server lists it; a tool or prompt gets its kept form values. @param {any} card */
  #restoreFrom(card) {
    const want = this.#restore;
    if (!want || want.server !== card.name) return;
    const lists = card.lists;
    /** @type {Record<string, () => any>} */
    const find = {
      tool: () => lists.tools.items.find((/** @type {any} */ t) => t?.name === want.key),
      prompt: () => lists.prompts.items.find((/** @type {any} */ p) => p?.name === want.key),
      resource: () => lists.resources.items.find((/** @type {any} */ r) => r?.uri === want.key),
      template: () => lists.templates.items.find((/** @type {any} */ t) => t?.uriTemplate === want.key),
      server: () => card,
    };
    const item = find[want.kind]?.();
    if (!item) return;
    this.open(want.kind, want.server, want.kind === "server" ? undefined : item);
    const values = this.#keptFormValues(want.kind, want.server, want.key);
    if (!values) return;
    if (want.kind === "tool") this.#tools.get(`${want.server}\n${want.key}`)?.edit(values);
    else if (want.kind === "prompt") this.#open?.view?.edit(values);
  }

  /** One of the person's tasks moved (tasks/changed): the tasks view, if open, shows it. @param {any} p */
  taskChanged(p) {
    const open = this.#open;
    if (open?.kind === "tasks" && p?.task) open.view.update(p.task);
  }

  /** The person's roots changed (roots/changed): the roots view, if open, shows them. @param {any} p */
  rootsChanged(p) {
    const open = this.#open;
    if (open?.kind === "roots" && p?.roots) open.view.show(p.roots);
  }

  /** @param {{server: string, uri: string}} p */
  resourceUpdated(p) {
    const open = this.#open;
    if (open?.kind === "resource" && open.server === p.server && open.key === p.uri) open.view.updated();
  }

  /**
   * A history entry again: Replay runs it as it was, Edit opens it with its arguments in the form.
   * @param {import("./history.js").HistoryEntry} entry @param {"replay" | "edit"} how
   */
  again(entry, how) {
    const { server, name, args } = entry;
    const lists = this.#ctx.card(server)?.lists;
    if (entry.kind === "tool") {
      const tool = lists?.tools.items.find((t) => t?.name === name) ?? { name, inputSchema: { type: "object" } };
      this.open("tool", server, tool);
      const tv = this.#tools.get(`${server}\n${name}`);
      if (how === "edit") tv?.edit(args);
      else tv?.run(args);
    } else if (entry.kind === "prompt") {
      const prompt = lists?.prompts.items.find((p) => p?.name === name)
        ?? { name, arguments: Object.keys(args).map((n) => ({ name: n })) };
      this.open("prompt", server, prompt);
      const view = this.#open?.view;
      if (how === "edit") view?.edit(args);
      else view?.run(args);
    } else {
      // Opening a resource reads it; there is nothing else to edit.
      const resource = lists?.resources.items.find((r) => r?.uri === name) ?? { uri: name, name };
      this.open("resource", server, resource);
    }
  }

  /**
   * A tool call still running that this tab did not start (`calls/running`, `calls/left`: the tab that started
   * it went away, as a reload does): pending in its tool's result area, now or when that tool is opened.
   * @param {any} c
   */
  callRunning(c) {
    if (c?.method !== "tools/call") return;
    const id = `${c.server}\n${c.name}`;
    const tv = this.#tools.get(id);
    if (tv) tv.showRunning(c);
    else this.#running.set(id, c);
  }

  /**
   * How a call this tab did not run here ended (`calls/outcome`: resumed on this webhost process after
   * the one running it stopped, or interrupted): shown in its tool's result area when that tool is open
   * in the page; the activity log has it in any case.
   * @param {any} p
   */
  callOutcome(p) {
    if (p?.method !== "tools/call") return;
    const id = `${p.server}\n${p.name}`;
    const tv = this.#tools.get(id);
    if (this.#running.get(id)?.callId === p.callId) this.#running.delete(id);
    if (tv) tv.showOutcome(p);
    else this.#outcomes.set(id, p); // shown when that tool is opened (its last outcome, like any result)
  }

  /**
   * Close a tool view for good: its apps get ui/resource-teardown, then it leaves the page.
   * @param {string} server @param {string} tool
   */
  async closeTool(server, tool) {
    const id = `${server}\n${tool}`;
    const tv = this.#tools.get(id);
    if (!tv) return;
    this.#tools.delete(id);
    if (this.#open?.kind === "tool" && this.#open.view === tv) this.showWelcome();
    await releaseThenRemove(tv.el, "the tool view was closed", this.#ctx.apps);
  }

  /** @param {string} server */
  forgetServer(server) {
    if (this.#open?.server === server) this.showWelcome();
    for (const [id, tv] of [...this.#tools]) {
      if (!id.startsWith(`${server}\n`)) continue;
      this.#tools.delete(id);
      void releaseThenRemove(tv.el, "the server was removed", this.#ctx.apps);
    }
  }
}

/**
 * Park a tool view; an app of it shown fullscreen goes back inline first (it would cover what is
 * shown now). One in picture-in-picture stays floating and running above it (park.js [data-floating]).
 * @param {HTMLElement} el @param {import("../apps/index.js").Apps} apps
 */
function parkToolView(el, apps) {
  for (const app of apps.list()) {
    if (app.displayMode === "fullscreen" && el.contains(app.element)) {
      try { app.setDisplayMode("inline"); } catch (err) { console.warn("webhost: could not bring the app back inline", err); }
    }
  }
  park(el);
}
