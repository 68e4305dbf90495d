// Classic (non-module) script loaded in <head> so the stored theme applies before first paint;
// a module runs after parsing and would flash the wrong theme. Keep in sync with theme.js.
(function () {
  var root = document.documentElement;
  var theme = null;
  try { theme = localStorage.getItem("webhost.theme"); } catch (e) { /* storage blocked */ }
  if (theme !== "light" && theme !== "dark") {
    var fallback = root.getAttribute("data-default-theme");
    theme = fallback === "light" || fallback === "dark" ? fallback
      : (window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light");
  }
  root.setAttribute("data-theme", theme);
})();
