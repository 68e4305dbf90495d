// @ts-check
// Entry module and the page's one composition root: builds the page from its components, hands
// each the collaborators it uses (the RPC client, the MCP Apps host side, the backend's limits)
// and wires backend notifications to them. Other modules only export; this one runs.

import { RpcClient } from "./rpc.js";
import { initTheme, toggleTheme, getTheme, onThemeChange } from "./theme.js";
import { DEFAULT_LIMITS } from "./constants.js";
import { showUser } from "./user.js";
import { connectionBanner } from "./components/conn-banner.js";
import { ActivityLog } from "./components/activity-log.js";
import { Inbox } from "./components/inbox.js";
import { ServerList } from "./components/server-list.js";
import { Workspace } from "./components/workspace.js";
import { Search } from "./components/search.js";
import { History, TRACKED } from "./components/history.js";
import { createApps } from "./apps/index.js";
import { ChatView } from "./chat/chat-view.js";

/** @param {string} id */
const byId = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

/**
 * Build the page and connect.
 * @returns {{rpc: RpcClient, apps: import("./apps/index.js").Apps, chat: ChatView,
 *   limits: () => import("./apps/index.js").Limits}} for automation and debugging (see `page`)
 */
function main() {
  initTheme();
  const rpc = new RpcClient();
  /** @type {Workspace} */
  let workspace;
  const history = new History(rpc, { replay: (e) => workspace.again(e, "replay"), edit: (e) => workspace.again(e, "edit") });
  // Every call the page makes (tools, resource reads, prompts) goes into the history, from one place.
  const send = rpc.request.bind(rpc);
  rpc.request = (method, params = {}) => {
    if (!(method in TRACKED)) return send(method, params);
    const tracked = history.withCallId(method, /** @type {Record<string, any>} */ (params));
    const promise = send(method, tracked);
    history.track(method, tracked, promise);
    return promise;
  };
  /** What the backend's configuration allows (session/info `limits`); defaults until it answers. */
  let limits = /** @type {import("./apps/index.js").Limits} */ ({ ...DEFAULT_LIMITS });
  const apps = createApps({ rpc, limits: () => limits });
  /** @type {Map<string, import("./components/call-result.js").CallResult>} */
  const calls = new Map();

  const log = new ActivityLog();
  const inbox = new Inbox(rpc, apps, (n) => {
    const badge = byId("inbox-badge");
    badge.hidden = n === 0;
    badge.textContent = `${n} waiting`;
  });
  /** @type {ServerList} */
  let servers;
  // Read before the workspace tidies the address: an address that names a view wins over the landing view.
  const addressed = new URLSearchParams(location.hash.slice(1)).has("kind");
  const chat = new ChatView({
    rpc,
    apps,
    readResource: (server, uri) => rpc.request("resources/read", { server, uri }),
    placementChanged: () => inbox.rehome(),
  });
  inbox.setPlacement((req) => chat.placeFor(req));
  workspace = new Workspace({
    chat,
    rpc,
    apps,
    calls,
    onCallDone: (callId) => inbox.callDone(callId),
    card: (name) => servers.cards.get(name),
    cards: () => [...servers.cards.values()],
    onActive: (server, kind, key) => {
      servers?.setActive(server, kind, key);
      // The chat takes the page; every other view is the workbench (servers, activity log), as it always was.
      document.body.dataset.view = kind === "chat" ? "chat" : "workbench";
      for (const [id, k] of [["open-workbench", "workbench"], ["open-chat", "chat"], ["open-apps", "apps"], ["open-audit", "audit"], ["open-sessions", "sessions"], ["open-admin", "admin"], ["open-roots", "roots"], ["open-tasks", "tasks"]]) {
        if (kind === k || (k === "workbench" && kind !== "chat")) byId(id).setAttribute("aria-current", "page");
        else byId(id).removeAttribute("aria-current");
      }
    },
  });
  const search = new Search(() => [...servers.cards.values()]);
  servers = new ServerList(rpc, {
    open: (kind, server, item) => workspace.open(kind, server, item),
    changed: (card) => { workspace.cardChanged(card); card.filter(search.query); },
    removed: (name) => workspace.forgetServer(name),
  });

  byId("banner-slot").replaceWith(connectionBanner(rpc));
  byId("server-list").replaceWith(search.el, servers.el, history.el);
  byId("workspace").append(workspace.el);
  byId("inbox-slot").replaceWith(inbox.el);
  byId("log-slot").replaceWith(log.el);
  wireHeader(inbox, workspace);
  wireAddress(workspace, addressed);

  rpc.on("servers/status", (p) => servers.updateStatus(p.server));
  // The person's servers changed (their groups at a session refresh, or `webhost reload`): list them anew,
  // which drops the cards of the servers gone.
  rpc.on("servers/changed", () => servers.refresh());
  // Entries come coalesced, in order ({entries: [...]}, webhost/outbox.py); {entry} is still read.
  rpc.on("activity", (p) => { for (const entry of p.entries ?? [p.entry]) log.add(entry); });
  rpc.on("progress", (p) => calls.get(String(p.callId))?.progress(p));
  rpc.on("server/log", (p) => servers.log(p));
  rpc.on("list/changed", (p) => servers.listChanged(p));
  rpc.on("resources/updated", (p) => workspace.resourceUpdated(p));
  rpc.on("roots/changed", (p) => workspace.rootsChanged(p));
  rpc.on("tasks/changed", (p) => workspace.taskChanged(p));
  rpc.on("elicitation/request", (p) => inbox.addElicitation(p));
  rpc.on("elicitation/resolved", (p) => inbox.resolveElicitation(p));
  rpc.on("approval/request", (p) => inbox.addApproval(p));
  rpc.on("approval/resolved", (p) => inbox.resolveApproval(p));
  // A call another webhost process started and stopped running (resumed here, or interrupted): its ending.
  rpc.on("calls/outcome", (p) => workspace.callOutcome(p));
  // Calls a tab of this person left running when it went (a reload): shown pending until their outcome comes.
  const running = (/** @type {any} */ p) => { for (const c of Array.isArray(p?.calls) ? p.calls : []) workspace.callRunning(c); };
  rpc.on("calls/left", running);
  rpc.on("history/added", (p) => history.added(p.entry));
  rpc.on("history/cleared", () => history.cleared());

  rpc.onState((state) => {
    // Every socket is a new backend session: fetch everything again.
    if (state === "open") {
      servers.refresh();
      void history.load();
      rpc.request("calls/running", {}).then(running).catch(() => { /* shown by the banner if the socket is gone */ });
      rpc.request("session/info", {}).then((info) => {
        document.documentElement.dataset.sessionId = String(info?.sessionId ?? "");
        if (info?.limits && typeof info.limits === "object") limits = { ...limits, ...info.limits };
        byId("open-sessions").hidden = info?.user?.role !== "admin"; // the live sessions are an admin's view
        byId("open-admin").hidden = info?.user?.role !== "admin"; // so is the admin view (and its method)
        showUser(byId("signed-in"), info?.user);
      }).catch(() => { /* shown by the banner if the socket is gone */ });
    }
    if (state === "closed") inbox.clear();
  });

  rpc.connect();
  return { rpc, apps, chat, limits: () => limits };
}

/**
 * The landing view, and the address followed in an open tab (`#kind=chat&key=ID` typed or linked).
 * @param {Workspace} workspace @param {boolean} addressed the page was loaded with a view in its address
 */
function wireAddress(workspace, addressed) {
  // With a model configured (the shell says so: index.html), people land in the chat; the workbench is a click away.
  if (!addressed && document.body.dataset.landing === "chat") queueMicrotask(() => workspace.open("chat", "", ""));
  // The workspace keeps the address with replaceState (no event): a hashchange is the person's or a link's.
  addEventListener("hashchange", () => {
    const params = new URLSearchParams(location.hash.slice(1));
    const kind = params.get("kind");
    if (kind === "chat") workspace.open("chat", "", params.get("key") ?? "");
    else if (kind === "workbench" && document.body.dataset.view === "chat") workspace.showWelcome();
    else if (kind && ["apps", "audit", "sessions", "roots", "tasks"].includes(kind)) workspace.open(/** @type {any} */ (kind), "");
  });
}

/** @param {Inbox} inbox @param {Workspace} workspace */
function wireHeader(inbox, workspace) {
  byId("open-chat").addEventListener("click", () => workspace.open("chat", "", workspace.chatConversation()));
  byId("open-workbench").addEventListener("click", () => {
    if (document.body.dataset.view === "chat") workspace.showWelcome();  // in the workbench already: it stays as it is
  });
  // In the chat the activity log is hidden until asked for (layout.css); the workbench always shows it.
  const activity = byId("toggle-activity");
  activity.addEventListener("click", () => {
    const open = document.body.dataset.activity !== "open";
    document.body.dataset.activity = open ? "open" : "closed";
    activity.setAttribute("aria-pressed", String(open));
  });
  byId("open-apps").addEventListener("click", () => workspace.open("apps", ""));
  byId("open-audit").addEventListener("click", () => workspace.open("audit", ""));
  byId("open-sessions").addEventListener("click", () => workspace.open("sessions", ""));
  byId("open-admin").addEventListener("click", () => workspace.open("admin", ""));
  // The sticky header's height, for scroll-padding (layout.css): what the page scrolls to stops below it.
  const topbar = /** @type {HTMLElement} */ (document.querySelector(".topbar"));
  new ResizeObserver(() => {
    document.documentElement.style.setProperty("--wh-topbar-height", `${topbar.offsetHeight}px`);
  }).observe(topbar);
  byId("open-roots").addEventListener("click", () => workspace.open("roots", ""));
  byId("open-tasks").addEventListener("click", () => workspace.open("tasks", ""));
  const toggle = byId("theme-toggle");
  const label = () => {
    const next = getTheme() === "dark" ? "light" : "dark";
    toggle.setAttribute("aria-label", `Switch to ${next} theme`);
    toggle.title = `Switch to ${next} theme`;
    toggle.dataset.theme = getTheme();
  };
  toggle.addEventListener("click", toggleTheme);
  onThemeChange(label);
  label();
  byId("inbox-badge").addEventListener("click", () => { inbox.reveal(); });
}

/** The running page, for automation: `(await import(mainScriptUrl)).page.rpc` / `.apps`. */
export const page = main();
