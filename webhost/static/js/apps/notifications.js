// @ts-check
// Every notification the host sends to an App (mcp-apps §5): the tool call's input and outcome
// (`ui/notifications/tool-input`, `tool-result`, `tool-cancelled`), host-context changes, progress of
// the App's own calls and list changes; and to its sandbox proxy, the App's resource. The place to
// add another (the chat's `ui/notifications/tool-input-partial`).

/**
 * @typedef {{kind: "result", value: any} | {kind: "cancelled", reason: string}} ToolOutcome
 */

export class AppNotifications {
  #channel;
  #closed;
  /** The tool call's arguments; null while the model is still writing them (the chat). @type {Record<string, unknown> | null} */
  #toolInput;
  /** The newest partial arguments not sent yet (held until the App is initialized). @type {Record<string, unknown> | null} */
  #partial = null;
  #initialized = false;
  /** @type {ToolOutcome | null} */
  #toolOutcome = null;
  #toolInputSent = false;
  #toolOutcomeSent = false;

  /**
   * @param {import("./channel.js").AppChannel} channel
   * @param {Record<string, unknown> | null} toolInput arguments of the tool call (tool frames); null: they come
   *   later (`setToolInput`), with partial ones meanwhile (`setPartialInput`)
   * @param {() => boolean} closed whether the frame is closed
   */
  constructor(channel, toolInput, closed) {
    this.#channel = channel;
    this.#toolInput = toolInput;
    this.#closed = closed;
  }

  /** The App is initialized (tool frames): its tool's arguments (or the newest partial ones), then the outcome. */
  sendToolInput() {
    this.#initialized = true;
    if (this.#toolInput === null) {
      this.#sendPartial();
      this.#sendToolOutcome();
      return;
    }
    this.#channel.post({ jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: this.#toolInput } });
    this.#toolInputSent = true;
    this.#sendToolOutcome();
  }

  /**
   * The arguments so far, healed (the model is writing them): sent as `tool-input-partial` once the App is
   * initialized, never after the complete input. @param {Record<string, unknown>} partial
   */
  setPartialInput(partial) {
    if (this.#toolInput !== null || this.#toolInputSent) return;
    this.#partial = partial;
    if (this.#initialized) this.#sendPartial();
  }

  /** The complete arguments, once (the model finished writing them). @param {Record<string, unknown>} input */
  setToolInput(input) {
    if (this.#toolInput !== null) return;
    this.#toolInput = input;
    this.#partial = null;
    if (this.#initialized) this.sendToolInput();
  }

  #sendPartial() {
    const partial = this.#partial;
    if (!partial || this.#closed()) return;
    this.#partial = null;
    this.#channel.post({ jsonrpc: "2.0", method: "ui/notifications/tool-input-partial", params: { arguments: partial } });
  }

  /** The tool call finished (the first outcome counts). @param {any} result a CallToolResult */
  setToolResult(result) {
    if (this.#toolOutcome) return;
    this.#toolOutcome = { kind: "result", value: result };
    this.#sendToolOutcome();
  }

  /** The tool call failed or was cancelled. @param {string} reason */
  setToolCancelled(reason) {
    if (this.#toolOutcome) return;
    this.#toolOutcome = { kind: "cancelled", reason: String(reason || "cancelled") };
    this.#sendToolOutcome();
  }

  /** After the tool input, once; a cancel may come before any input (the person denied or stopped the call). */
  #sendToolOutcome() {
    const outcome = this.#toolOutcome;
    if (!outcome || this.#toolOutcomeSent || this.#closed() || !this.#initialized) return;
    if (!this.#toolInputSent && outcome.kind === "result") return;
    this.#toolOutcomeSent = true;
    if (outcome.kind === "result") {
      this.#channel.post({ jsonrpc: "2.0", method: "ui/notifications/tool-result", params: outcome.value ?? { content: [] } });
    } else {
      this.#channel.post({ jsonrpc: "2.0", method: "ui/notifications/tool-cancelled", params: { reason: outcome.reason } });
    }
  }

  /** The context keys that changed (the App is initialized). @param {Record<string, unknown>} diff */
  hostContextChanged(diff) {
    this.#channel.post({ jsonrpc: "2.0", method: "ui/notifications/host-context-changed", params: diff });
  }

  /** Backend progress for an App-initiated tools/call (`apps/progress`). @param {any} p */
  progress(p) {
    if (!p || (typeof p.progressToken !== "string" && typeof p.progressToken !== "number")) return;
    /** @type {Record<string, unknown>} */
    const params = { progressToken: p.progressToken, progress: Number(p.progress) || 0 };
    if (typeof p.total === "number") params.total = p.total;
    if (typeof p.message === "string") params.message = p.message;
    this.#channel.send({ jsonrpc: "2.0", method: "notifications/progress", params });
  }

  /**
   * The server's tools or resources changed: told when the hostCapabilities promised listChanged
   * for that list. @param {string} list "tools" | "resources" | "prompts" @param {any} hostCapabilities
   */
  listChanged(list, hostCapabilities) {
    const caps = hostCapabilities ?? {};
    if (list === "tools" && caps.serverTools?.listChanged === true) {
      this.#channel.send({ jsonrpc: "2.0", method: "notifications/tools/list_changed", params: {} });
    } else if (list === "resources" && caps.serverResources?.listChanged === true) {
      this.#channel.send({ jsonrpc: "2.0", method: "notifications/resources/list_changed", params: {} });
    }
  }

  /**
   * To the sandbox proxy: the App's HTML and policy. A warm proxy also gets the App's own document
   * (`appUrl`), which it loads from here. @param {import("./frame.js").AppFrameDescriptor} d @param {boolean} warm
   */
  resourceReady(d, warm) {
    /** @type {Record<string, unknown>} */
    const params = { html: d.html };
    if (d.csp && typeof d.csp === "object") params.csp = d.csp;
    if (d.permissions && typeof d.permissions === "object") params.permissions = d.permissions;
    if (typeof d.sandbox === "string") params.sandbox = d.sandbox;
    if (warm) params.appUrl = d.appUrl;
    this.#channel.post({ jsonrpc: "2.0", method: "ui/notifications/sandbox-resource-ready", params });
  }

  /**
   * To a warm proxy, before the resource: the App's own document (a small message), so its request
   * overlaps the HTML's transfer. @param {import("./frame.js").AppFrameDescriptor} d
   */
  appDocument(d) {
    this.#channel.post({ jsonrpc: "2.0", method: "ui/notifications/sandbox-webhost-app-document",
      params: { appUrl: d.appUrl, sandbox: d.sandbox } });
  }
}
