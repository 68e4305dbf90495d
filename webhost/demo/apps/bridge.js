const PROTOCOL_VERSION = "2026-01-26";
const bridge = (() => {
  let nextId = 1;
  const pending = new Map();
  const requestHandlers = new Map();
  const notificationHandlers = new Map();
  const logEl = () => document.getElementById("log");
  function log(line) {
    const el = logEl();
    if (!el) return;
    const stamp = new Date().toLocaleTimeString();
    el.textContent += "[" + stamp + "] " + line + "\n";
    el.scrollTop = el.scrollHeight;
  }
  function short(value) {
    const text = JSON.stringify(value);
    return text === undefined ? "" : (text.length > 300 ? text.slice(0, 300) + "…" : text);
  }
  function post(message) { window.parent.postMessage(message, "*"); }
  function request(method, params) {
    const id = nextId++;
    log("→ " + method + " " + short(params));
    post({ jsonrpc: "2.0", id: id, method: method, params: params === undefined ? {} : params });
    return new Promise((resolve, reject) => pending.set(id, { resolve, reject, method }));
  }
  function notify(method, params) {
    const message = { jsonrpc: "2.0", method: method };
    if (params !== undefined) message.params = params;
    if (method !== "ui/notifications/size-changed") log("→ " + method + " " + short(params));
    post(message);
  }
  function respond(id, result) { post({ jsonrpc: "2.0", id: id, result: result }); }
  function fail(id, code, message) {
    post({ jsonrpc: "2.0", id: id, error: { code: code, message: message } });
  }
  window.addEventListener("message", async (event) => {
    if (event.source !== window.parent) return;
    const msg = event.data;
    if (!msg || typeof msg !== "object" || msg.jsonrpc !== "2.0") return;
    if (typeof msg.method !== "string") {
      const entry = pending.get(msg.id);
      if (!entry) return;
      pending.delete(msg.id);
      if (msg.error) {
        log("← error for " + entry.method + ": " + short(msg.error));
        entry.reject(msg.error);
      } else {
        log("← result for " + entry.method + ": " + short(msg.result));
        entry.resolve(msg.result);
      }
      return;
    }
    if (msg.id !== undefined && msg.id !== null) {
      log("← request " + msg.method);
      const handler = requestHandlers.get(msg.method);
      if (!handler) { fail(msg.id, -32601, "Method not found: " + msg.method); return; }
      try {
        const result = await handler(msg.params || {}, msg.id);
        if (result !== undefined) respond(msg.id, result);
      } catch (error) {
        fail(msg.id, -32603, String(error && error.message ? error.message : error));
      }
      return;
    }
    log("← " + msg.method);
    const handler = notificationHandlers.get(msg.method);
    if (handler) handler(msg.params || {});
  });
  requestHandlers.set("ping", () => ({}));
  requestHandlers.set("ui/resource-teardown", () => ({}));
  let hostContext = {};
  function applyHostContext(patch) {
    hostContext = Object.assign({}, hostContext, patch || {});
    const root = document.documentElement;
    if (hostContext.theme === "light" || hostContext.theme === "dark") {
      root.dataset.theme = hostContext.theme;
      root.style.colorScheme = hostContext.theme;
    }
    const styles = hostContext.styles || {};
    const variables = styles.variables || {};
    for (const [name, value] of Object.entries(variables)) {
      if (typeof name === "string" && name.startsWith("--") && typeof value === "string") {
        root.style.setProperty(name, value);
      }
    }
    if (styles.css && typeof styles.css.fonts === "string") {
      let tag = document.getElementById("host-fonts");
      if (!tag) {
        tag = document.createElement("style");
        tag.id = "host-fonts";
        document.head.appendChild(tag);
      }
      tag.textContent = styles.css.fonts;
    }
    if (typeof bridge.onHostContext === "function") bridge.onHostContext(hostContext);
  }
  notificationHandlers.set("ui/notifications/host-context-changed", applyHostContext);
  let lastSize = "";
  function reportSize() {
    const main = document.querySelector("main") || document.body;
    const rect = main.getBoundingClientRect();
    const width = Math.ceil(rect.width);
    const height = Math.ceil(rect.height);
    const key = width + "x" + height;
    if (key === lastSize) return;
    lastSize = key;
    notify("ui/notifications/size-changed", { width: width, height: height });
  }
  async function connect(appInfo, appCapabilities) {
    const result = await request("ui/initialize", {
      appInfo: appInfo,
      appCapabilities: appCapabilities,
      protocolVersion: PROTOCOL_VERSION,
    });
    applyHostContext((result && result.hostContext) || {});
    notify("ui/notifications/initialized");
    const main = document.querySelector("main") || document.body;
    new ResizeObserver(() => requestAnimationFrame(reportSize)).observe(main);
    reportSize();
    return result;
  }
  return {
    log, request, notify, respond, fail, connect, reportSize,
    onRequest: (method, handler) => requestHandlers.set(method, handler),
    onNotification: (method, handler) => notificationHandlers.set(method, handler),
    hostContext: () => hostContext,
    onHostContext: null,
  };
})();
