// @ts-check
// The "disconnected / reconnecting" notice driven by the RPC client's connection state
// ([data-testid="connection-banner"], data-state = closed / connecting; hidden once open again). When
// the webhost process holding the socket stops, the page reconnects (to another replica, if there are
// several) within seconds. A session someone ended (sessions/end) shows why, with data-ended="true",
// and waits for "Reconnect".

import { h } from "../html.js";

/** @param {import("../rpc.js").RpcClient} rpc */
export function connectionBanner(rpc) {
  const text = h("span", { class: "banner-text" });
  const retry = h("button", { type: "button", class: "small", text: "Retry now" });
  const el = h("div", { class: "conn-banner", role: "status", "aria-live": "polite", hidden: true,
    dataset: { testid: "connection-banner" } }, h("span", { class: "banner-dot", "aria-hidden": "true" }), text, retry);
  retry.addEventListener("click", () => rpc.reconnectNow());
  /** @type {ReturnType<typeof setInterval> | null} */
  let countdown = null;
  rpc.onState((state, info) => {
    if (countdown) clearInterval(countdown);
    countdown = null;
    el.dataset.state = state;
    document.documentElement.dataset.connection = state;
    if (state === "open") {
      el.hidden = true;
      return;
    }
    el.hidden = state === "connecting" && !info.everOpened && info.attempt === 0;
    retry.hidden = state !== "closed";
    retry.textContent = info.endedReason ? "Reconnect" : "Retry now";
    if (state === "closed" && info.endedReason) {
      // Ended on purpose (sessions/end): no countdown, the person decides when to come back.
      el.dataset.ended = "true";
      text.textContent = `This session was ended: ${info.endedReason}`;
      return;
    }
    delete el.dataset.ended;
    if (state === "connecting") {
      text.textContent = info.everOpened ? "Reconnecting to webhost…" : "Connecting to webhost…";
      return;
    }
    const why = info.closeReason ? ` (${info.closeReason})` : "";
    const lead = info.everOpened ? `Disconnected from webhost${why}.` : "Cannot reach webhost.";
    const hint = !info.everOpened && info.attempt >= 2
      ? " If your session expired, open the login link webhost printed at start." : "";
    const until = Date.now() + info.retryInMs;
    const tick = () => {
      const s = Math.max(0, Math.ceil((until - Date.now()) / 1000));
      text.textContent = `${lead} Reconnecting in ${s} s…${hint}`;
    };
    tick();
    countdown = setInterval(tick, 500);
  });
  return el;
}
