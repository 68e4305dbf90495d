// @ts-check
// Where an App's frame comes from when it opens: the frame it was prepared in (its App already
// booted there, warm-frames.js), a warm proxy frame of its origin (the proxy already loaded), or a
// new one loading the proxy (cold). A frame that cannot move into the stage without reloading is
// never used.

import { decorateAppIframe, warmEligible } from "./frame.js";

/**
 * @typedef {object} Placed
 * @property {"prepared" | "warm" | "cold"} how
 * @property {HTMLIFrameElement} iframe the frame now on the stage
 * @property {any[]} held what a prepared App sent before its open (its `ui/initialize`, at least)
 */

/**
 * Put the App's frame on the stage.
 * @param {{descriptor: import("./frame.js").AppFrameDescriptor, stage: import("./stage.js").Stage,
 *   cold: HTMLIFrameElement, warmFrames: import("./warm-frames.js").WarmFrames | null,
 *   prepared: import("./warm-frames.js").TakenApp | null}} frame
 * @returns {Placed}
 */
export function placeFrame({ descriptor: d, stage, cold, warmFrames, prepared }) {
  const fits = warmEligible(d) && stage.box.isConnected;
  if (prepared && (d.prepared !== true || !fits)) {
    prepared.discard();
  } else if (prepared) {
    if (moveIn(stage, prepared.iframe, d)) return { how: "prepared", iframe: prepared.iframe, held: prepared.claim() ?? [] };
    prepared.discard();  // only the frame it was prepared in holds this App: it opens cold
    return coldFrame(stage, cold, d);
  }
  const frame = warmFrames && fits ? warmFrames.take(d.origin) : null;
  if (frame) {
    if (moveIn(stage, frame, d)) return { how: "warm", iframe: frame, held: [] };
    frame.remove();
  }
  return coldFrame(stage, cold, d);
}

/**
 * A loaded frame moved onto the stage with its document kept (false: the browser cannot).
 * @param {import("./stage.js").Stage} stage @param {HTMLIFrameElement} frame @param {import("./frame.js").AppFrameDescriptor} d
 */
function moveIn(stage, frame, d) {
  try {
    stage.mount(decorateAppIframe(frame, d), { move: true });
    return true;
  } catch {
    return false;
  }
}

/**
 * The new frame, loading the proxy. @param {import("./stage.js").Stage} stage @param {HTMLIFrameElement} iframe
 * @param {import("./frame.js").AppFrameDescriptor} d @returns {Placed}
 */
function coldFrame(stage, iframe, d) {
  iframe.src = d.proxyUrl;
  stage.mount(iframe);
  return { how: "cold", iframe, held: [] };
}
