// @ts-check
// Entry module: builds the page from its components, wires backend notifications to them,
// and exposes the host hooks the MCP Apps bridge (static/js/apps/) uses.

import { RpcClient } from "./rpc.js";
import { initTheme, toggleTheme, getTheme, onThemeChange, getStyleVariables, THEME_EVENT } from "./theme.js";
import { connectionBanner } from "./components/conn-banner.js";
import { ActivityLog } from "./components/activity-log.js";
import { Inbox } from "./components/inbox.js";
import { ServerList } from "./components/server-list.js";
import { Workspace } from "./components/workspace.js";
import "./apps/index.js"; // installs window.webhostApps (MCP Apps host side)

/** @param {string} id */
const byId = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

function main() {
  initTheme();
  const rpc = new RpcClient();
  /** @type {Map<string, import("./components/call-result.js").CallResult>} */
  const calls = new Map();

  const log = new ActivityLog();
  const inbox = new Inbox(rpc, (n) => {
    const badge = byId("inbox-badge");
    badge.hidden = n === 0;
    badge.textContent = `${n} waiting`;
  });
  /** @type {ServerList} */
  let servers;
  const workspace = new Workspace({
    rpc,
    calls,
    card: (name) => servers.cards.get(name),
    cards: () => [...servers.cards.values()],
    onActive: (server, kind, key) => {
      servers?.setActive(server, kind, key);
      for (const [id, k] of [["open-apps", "apps"], ["open-audit", "audit"]]) {
        if (kind === k) byId(id).setAttribute("aria-current", "page");
        else byId(id).removeAttribute("aria-current");
      }
    },
  });
  servers = new ServerList(rpc, {
    open: (kind, server, item) => workspace.open(kind, server, item),
    changed: (card) => workspace.cardChanged(card),
    removed: (name) => workspace.forgetServer(name),
  });

  byId("banner-slot").replaceWith(connectionBanner(rpc));
  byId("server-list").replaceWith(servers.el);
  byId("workspace").append(workspace.el);
  byId("inbox-slot").replaceWith(inbox.el);
  byId("log-slot").replaceWith(log.el);
  wireHeader(inbox.el, workspace);

  rpc.on("servers/status", (p) => servers.updateStatus(p.server));
  rpc.on("activity", (p) => log.add(p.entry));
  rpc.on("progress", (p) => calls.get(String(p.callId))?.progress(p));
  rpc.on("server/log", (p) => servers.log(p));
  rpc.on("list/changed", (p) => servers.listChanged(p));
  rpc.on("resources/updated", (p) => workspace.resourceUpdated(p));
  rpc.on("elicitation/request", (p) => inbox.addElicitation(p));
  rpc.on("elicitation/resolved", (p) => inbox.resolveElicitation(p));
  rpc.on("approval/request", (p) => inbox.addApproval(p));
  rpc.on("approval/resolved", (p) => inbox.resolveApproval(p));

  rpc.onState((state) => {
    // Every socket is a new backend session: fetch everything again.
    if (state === "open") {
      servers.refresh();
      rpc.request("session/info", {}).then((info) => {
        document.documentElement.dataset.sessionId = String(info?.sessionId ?? "");
      }).catch(() => { /* shown by the banner if the socket is gone */ });
    }
    if (state === "closed") inbox.clear();
  });

  // Host hooks for the MCP Apps bridge; it installs window.webhostApps (see README of apps/).
  /** @type {any} */ (window).webhost = Object.freeze({
    version: document.documentElement.dataset.version ?? "",
    rpc,
    theme: Object.freeze({ get: getTheme, onChange: onThemeChange, styleVariables: getStyleVariables, event: THEME_EVENT }),
    openResource: (/** @type {string} */ server, /** @type {any} */ resource) => workspace.open("resource", server, resource),
  });
  document.dispatchEvent(new CustomEvent("webhost:ready"));
  rpc.connect();
}

/** @param {HTMLElement} inboxEl @param {Workspace} workspace */
function wireHeader(inboxEl, workspace) {
  byId("open-apps").addEventListener("click", () => workspace.open("apps", ""));
  byId("open-audit").addEventListener("click", () => workspace.open("audit", ""));
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
  byId("inbox-badge").addEventListener("click", () => {
    inboxEl.scrollIntoView({ behavior: "smooth", block: "start" });
    const first = /** @type {HTMLElement | null} */ (inboxEl.querySelector("input, select, textarea, button"));
    first?.focus();
  });
}

main();
