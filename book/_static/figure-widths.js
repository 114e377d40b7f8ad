// Figures that stay readable on narrow screens (phones, split windows) and never overlap text.
//
// plotly's "responsive" mode shrinks a figure to its container; a 4-panel figure squeezed to a
// phone's 360 px overlaps its subplot titles and legend. Each figure gets a minimum width from
// its number of panel columns, its longest titles and a legend on the right; below that width
// its cell scrolls sideways instead of squeezing. A legend below the panels that lands on an
// x-axis title (it wraps into more rows on a narrow figure) is moved down, and the figure grows
// by as much. Nothing changes where the page is wide enough.
(function () {
  const PER_COLUMN = 220; // px a panel needs for its ticks and axis labels
  const RIGHT_LEGEND = 170; // px for a vertical legend beside the panels
  const PER_CHARACTER = 8; // px per character of a title (plotly's 12-14 px sans-serif)

  function text(value) {
    return (typeof value === "string" ? value : (value && value.text) || "").replace(/<[^>]*>/g, "");
  }

  function neededWidth(gd) {
    const layout = gd.layout || {};
    const starts = new Set();
    for (const [key, axis] of Object.entries(layout)) {
      if (/^xaxis\d*$/.test(key) && axis && Array.isArray(axis.domain)) starts.add(axis.domain[0].toFixed(2));
    }
    const columns = Math.max(1, starts.size);
    // the longest subplot title (an annotation on top of a panel) or x-axis title sets a column's width
    let longest = 0;
    for (const note of layout.annotations || []) longest = Math.max(longest, text(note.text).length);
    for (const [key, axis] of Object.entries(layout)) {
      if (/^xaxis\d*$/.test(key) && axis) longest = Math.max(longest, text(axis.title).length);
    }
    const perColumn = Math.max(PER_COLUMN, PER_CHARACTER * longest + 20);
    const title = PER_CHARACTER * text(layout.title).length + 60;
    const legendRight = layout.showlegend !== false && (layout.legend || {}).orientation !== "h" &&
      (gd.data || []).some((trace) => trace.showlegend !== false && trace.name);
    return Math.max(columns * perColumn, title) + (legendRight ? RIGHT_LEGEND : 0);
  }

  function fit(gd) {
    if (!window.Plotly || !gd.layout || gd.dataset.widthFitted) return;
    const needed = neededWidth(gd);
    const container = gd.parentElement;
    gd.dataset.widthFitted = "1";
    if (container.clientWidth >= needed) return;
    gd.style.minWidth = needed + "px";
    container.style.overflowX = "auto";
    return window.Plotly.Plots.resize(gd);
  }

  function overlap(a, b) {
    return a.width > 0 && b.width > 0 && a.right > b.left && a.left < b.right && a.bottom > b.top && a.top < b.bottom;
  }

  function clearLegend(gd) {
    const full = gd._fullLayout;
    const legend = gd.querySelector(".legend");
    if (!full || !legend || !full.legend || full.legend.orientation !== "h" || full.legend.y >= 0) return;
    const box = legend.getBoundingClientRect();
    let push = 0;
    gd.querySelectorAll(".g-xtitle text, .xtitle, .xtick text").forEach((label) => {
      const r = label.getBoundingClientRect();
      if (overlap(r, box)) push = Math.max(push, r.bottom - box.top + 6);
    });
    if (push <= 0 || gd.dataset.legendMoved) return;
    gd.dataset.legendMoved = "1";
    const height = full.height + push;
    gd.style.height = height + "px"; // the figure's div has the original height fixed: grow it too
    window.Plotly.relayout(gd, {
      "legend.y": full.legend.y - push / full._size.h,
      "margin.b": full.margin.b + push,
      height: height,
      width: gd.clientWidth,
    });
  }

  function fitAll() {
    document.querySelectorAll(".js-plotly-plot").forEach((gd) => {
      Promise.resolve(fit(gd)).then(() => clearLegend(gd));
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", fitAll);
  else fitAll();
  window.addEventListener("load", fitAll);
  // figures inside widget outputs are drawn later, by the widget manager
  let pending = null;
  new MutationObserver(() => {
    clearTimeout(pending);
    pending = setTimeout(fitAll, 100);
  }).observe(document.body, { childList: true, subtree: true });
})();
