// @ts-check
// Opening a link an app asked for in a new tab, and knowing whether it opened. A browser opens a tab only
// from the person's own action (a click, within a few seconds of it); a popup blocker stops the rest, and
// window.open then returns null. With the "noopener" or "noreferrer" feature it returns null either way, so
// the tab is opened blank without them, its opener is cut at once, and the link is followed from the blank
// tab's own document with rel="noreferrer": the linked site gets neither a handle on this page nor its
// address, as with "noopener,noreferrer".

/**
 * The URL when `value` is a link webhost opens: http or https, without credentials
 * (https://trusted.example@evil.example/ reads as the trusted site); null otherwise.
 * @param {unknown} value
 * @returns {URL | null}
 */
export function openableUrl(value) {
  if (typeof value !== "string") return null;
  let url;
  try { url = new URL(value); } catch { return null; }
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  return url.username || url.password ? null : url;
}

/**
 * Open `url` in a new tab, severed from this page; returns whether the browser opened it.
 * Call it within the person's click for it to open.
 * @param {URL} url an openableUrl
 */
export function openInNewTab(url) {
  /** @type {Window | null} */
  let tab = null;
  try { tab = window.open("about:blank", "_blank"); } catch { return false; }
  if (!tab) return false;
  try {
    tab.opener = null;  // the blank tab is this page's origin: allowed, and the link's page gets no opener
    const doc = tab.document;
    const link = doc.createElement("a");
    link.href = url.href;
    link.rel = "noreferrer";
    (doc.body ?? doc.documentElement).append(link);
    link.click();  // a navigation of the tab's own document: it needs no activation, and sends no Referer
  } catch {
    tab.close();  // a tab that would keep a handle on this page, or not reach the link, is not left open
    return false;
  }
  return true;
}
