// @ts-check
// The admin view's chart: everyone's tokens per day as bars, an SVG drawn here (no library). It is an image
// with a <title> and <desc> (role="img", aria-labelledby); the same numbers are in the table beside it.

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 600;
const HEIGHT = 160;
const PAD = 24;

/** @param {string} tag @param {Record<string, string | number>} attrs */
function svg(tag, attrs) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, String(value));
  return el;
}

/** Every day of the period, in order (UTC, YYYY-MM-DD). @param {string} since @param {string} until */
export function daysOf(since, until) {
  /** @type {string[]} */
  const days = [];
  const end = Date.parse(`${until}T00:00:00Z`);
  for (let t = Date.parse(`${since}T00:00:00Z`); t <= end && days.length < 400; t += 86_400_000) {
    days.push(new Date(t).toISOString().slice(0, 10));
  }
  return days;
}

/**
 * @param {string[]} days
 * @param {Map<string, number>} tokensByDay
 * @param {string} idBase ids of the title and description, unique in the page
 */
export function usageChart(days, tokensByDay, idBase) {
  const most = Math.max(1, ...days.map((d) => tokensByDay.get(d) ?? 0));
  const total = days.reduce((sum, d) => sum + (tokensByDay.get(d) ?? 0), 0);
  const root = svg("svg", { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img", class: "admin-chart",
    "aria-labelledby": `${idBase}-title ${idBase}-desc` });
  const title = svg("title", { id: `${idBase}-title` });
  title.textContent = "Tokens per day";
  const desc = svg("desc", { id: `${idBase}-desc` });
  desc.textContent = `${total.toLocaleString()} tokens from ${days[0] ?? "—"} to ${days.at(-1) ?? "—"}; `
    + `the most on one day ${most.toLocaleString()}. The table "Tokens per day" has every day's number.`;
  root.append(title, desc, svg("line", { x1: PAD, y1: HEIGHT - PAD, x2: WIDTH, y2: HEIGHT - PAD, class: "admin-chart-axis" }));
  const step = (WIDTH - PAD) / Math.max(1, days.length);
  days.forEach((day, i) => {
    const tokens = tokensByDay.get(day) ?? 0;
    const height = Math.round(((HEIGHT - 2 * PAD) * tokens) / most);
    const bar = svg("rect", { x: (PAD + i * step + step * 0.1).toFixed(1), y: HEIGHT - PAD - height,
      width: (step * 0.8).toFixed(1), height, class: "admin-chart-bar" });
    const tip = svg("title", {});
    tip.textContent = `${day}: ${tokens.toLocaleString()} tokens`;
    bar.append(tip);
    root.append(bar);
  });
  const top = svg("text", { x: 2, y: PAD - 8, class: "admin-chart-label" });
  top.textContent = most.toLocaleString();
  const first = svg("text", { x: PAD, y: HEIGHT - 6, class: "admin-chart-label" });
  first.textContent = days[0] ?? "";
  const last = svg("text", { x: WIDTH, y: HEIGHT - 6, class: "admin-chart-label", "text-anchor": "end" });
  last.textContent = days.at(-1) ?? "";
  root.append(top, first, last);
  return root;
}
