// @ts-check
// hostContext.styles for MCP Apps: all 76 standard style variables, with values that match the
// page's current theme (mcp-apps §5.2). The page's own CSS (theme.css) defines them with
// light-dark(); those are resolved here to the current theme's branch, so an App that never
// sets color-scheme still gets the right colours. A built-in table fills anything missing.

import { STYLE_VARIABLES } from "../theme.js";

/** @typedef {"light" | "dark"} Theme */

const SHARED = {
  "--font-sans": 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif',
  "--font-mono": 'ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace',
  "--font-weight-normal": "400",
  "--font-weight-medium": "500",
  "--font-weight-semibold": "600",
  "--font-weight-bold": "700",
  "--font-text-xs-size": "0.75rem",
  "--font-text-xs-line-height": "1.1rem",
  "--font-text-sm-size": "0.8125rem",
  "--font-text-sm-line-height": "1.25rem",
  "--font-text-md-size": "0.9375rem",
  "--font-text-md-line-height": "1.45rem",
  "--font-text-lg-size": "1.0625rem",
  "--font-text-lg-line-height": "1.6rem",
  "--font-heading-xs-size": "0.8125rem",
  "--font-heading-xs-line-height": "1.2rem",
  "--font-heading-sm-size": "0.9375rem",
  "--font-heading-sm-line-height": "1.35rem",
  "--font-heading-md-size": "1.125rem",
  "--font-heading-md-line-height": "1.5rem",
  "--font-heading-lg-size": "1.375rem",
  "--font-heading-lg-line-height": "1.8rem",
  "--font-heading-xl-size": "1.75rem",
  "--font-heading-xl-line-height": "2.2rem",
  "--font-heading-2xl-size": "2.125rem",
  "--font-heading-2xl-line-height": "2.6rem",
  "--font-heading-3xl-size": "2.625rem",
  "--font-heading-3xl-line-height": "3.1rem",
  "--border-radius-xs": "3px",
  "--border-radius-sm": "5px",
  "--border-radius-md": "8px",
  "--border-radius-lg": "12px",
  "--border-radius-xl": "16px",
  "--border-radius-full": "9999px",
  "--border-width-regular": "1px",
};

/** [light, dark] for the colour and shadow variables. */
const THEMED = {
  "--color-background-primary": ["#ffffff", "#15181d"],
  "--color-background-secondary": ["#f6f7f9", "#0f1115"],
  "--color-background-tertiary": ["#eceff3", "#1d2128"],
  "--color-background-inverse": ["#111827", "#f3f4f6"],
  "--color-background-ghost": ["rgba(17, 24, 39, 0.04)", "rgba(255, 255, 255, 0.05)"],
  "--color-background-info": ["#eff6ff", "#0f213a"],
  "--color-background-danger": ["#fef2f2", "#321619"],
  "--color-background-success": ["#f0fdf4", "#10291b"],
  "--color-background-warning": ["#fffbeb", "#2f2610"],
  "--color-background-disabled": ["#f3f4f6", "#22262d"],
  "--color-text-primary": ["#111827", "#e7e9ec"],
  "--color-text-secondary": ["#4b5563", "#aab2bd"],
  "--color-text-tertiary": ["#6b7280", "#8b94a1"],
  "--color-text-inverse": ["#ffffff", "#111827"],
  "--color-text-ghost": ["#9ca3af", "#6b7480"],
  "--color-text-info": ["#1d4ed8", "#8ab8ff"],
  "--color-text-danger": ["#b91c1c", "#ff9b9b"],
  "--color-text-success": ["#15803d", "#72e3a2"],
  "--color-text-warning": ["#92400e", "#f3c969"],
  "--color-text-disabled": ["#9ca3af", "#5f6773"],
  "--color-border-primary": ["#d5dae1", "#313741"],
  "--color-border-secondary": ["#e5e8ec", "#262b33"],
  "--color-border-tertiary": ["#eef0f3", "#1f232a"],
  "--color-border-inverse": ["#111827", "#f3f4f6"],
  "--color-border-ghost": ["rgba(17, 24, 39, 0.08)", "rgba(255, 255, 255, 0.08)"],
  "--color-border-info": ["#bfdbfe", "#1f4170"],
  "--color-border-danger": ["#fecaca", "#6b252b"],
  "--color-border-success": ["#bbf7d0", "#1d5534"],
  "--color-border-warning": ["#fcd34d", "#6a5214"],
  "--color-border-disabled": ["#e5e7eb", "#2c313a"],
  "--color-ring-primary": ["#2563eb", "#6aa5ff"],
  "--color-ring-secondary": ["#6b7280", "#8b94a1"],
  "--color-ring-inverse": ["#ffffff", "#111827"],
  "--color-ring-info": ["#3b82f6", "#6aa5ff"],
  "--color-ring-danger": ["#dc2626", "#f87171"],
  "--color-ring-success": ["#16a34a", "#4ade80"],
  "--color-ring-warning": ["#d97706", "#fbbf24"],
  "--shadow-hairline": ["0 0 0 1px rgba(17, 24, 39, 0.06)", "0 0 0 1px rgba(0, 0, 0, 0.4)"],
  "--shadow-sm": ["0 1px 2px rgba(17, 24, 39, 0.06)", "0 1px 2px rgba(0, 0, 0, 0.35)"],
  "--shadow-md": ["0 4px 12px rgba(17, 24, 39, 0.08)", "0 4px 12px rgba(0, 0, 0, 0.4)"],
  "--shadow-lg": ["0 12px 32px rgba(17, 24, 39, 0.12)", "0 12px 32px rgba(0, 0, 0, 0.5)"],
};

/**
 * The built-in value of one variable for a theme (used when the page does not define it).
 * @param {string} name @param {Theme} theme
 */
export function defaultStyleValue(name, theme) {
  const pair = /** @type {Record<string, string[]>} */ (THEMED)[name];
  if (pair) return pair[theme === "dark" ? 1 : 0];
  return /** @type {Record<string, string>} */ (SHARED)[name] ?? "";
}

/**
 * Replace every light-dark(a, b) in a CSS value with the branch for `theme` (nesting-aware).
 * @param {string} value @param {Theme} theme
 */
export function resolveLightDark(value, theme) {
  const marker = "light-dark(";
  let out = value;
  for (let guard = 0; guard < 32; guard++) {
    const start = out.toLowerCase().lastIndexOf(marker); // innermost first
    if (start < 0) break;
    let depth = 0;
    let comma = -1;
    let end = -1;
    for (let i = start + marker.length; i < out.length; i++) {
      const c = out[i];
      if (c === "(") depth++;
      else if (c === ")") {
        if (depth === 0) { end = i; break; }
        depth--;
      } else if (c === "," && depth === 0 && comma < 0) comma = i;
    }
    if (end < 0 || comma < 0) break; // malformed: leave as is
    const light = out.slice(start + marker.length, comma).trim();
    const dark = out.slice(comma + 1, end).trim();
    out = out.slice(0, start) + (theme === "dark" ? dark : light) + out.slice(end + 1);
  }
  return out.trim();
}

/**
 * All 76 standard variables with values for the current theme: the page's computed values
 * (light-dark() resolved), else the built-in table.
 * @param {Theme} theme
 * @param {Element} [root]
 * @returns {Record<string, string>}
 */
export function styleVariables(theme, root = document.documentElement) {
  const computed = getComputedStyle(root);
  /** @type {Record<string, string>} */
  const out = {};
  for (const name of STYLE_VARIABLES) {
    const raw = computed.getPropertyValue(name).trim();
    const value = raw ? resolveLightDark(raw, theme) : "";
    out[name] = value || defaultStyleValue(name, theme);
  }
  return out;
}
