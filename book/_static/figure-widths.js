// Every figure fits the text column, on a desktop and on a phone, and is labelled where the eye starts.
//
// plotly's "responsive" mode shrinks a figure to its column; a 5-panel figure squeezed to a phone's
// 360 px overlaps its titles and ticks. Here, once a figure is drawn (and again when the column's
// width changes), from the figure's own layout:
// * its panels (the subplot grid: one panel per x axis with a domain) are laid out again with as
//   many columns as the column's width allows (a panel needs PANEL px, BARE px without tick
//   labels); the columns that do not fit stack into rows, in reading order, each original row
//   starting a new row; the figure grows taller by as much;
// * subplot titles go to their panel's top-left corner (wrapped to its width); column titles
//   (titles over the top row only) are repeated over every panel once columns stack; row titles
//   (plotly's rotated text at the far right) become a bold heading above their row;
// * a legend to the right moves below the panels when the column is narrow; legends, sliders and
//   buttons above or below the panels keep their distance in px; a row of buttons too wide for
//   the figure becomes a drop-down; long figure and axis titles wrap;
// * a slider or legend below the panels that lands on x-axis labels is moved down, and the figure grows.
// Nothing scrolls sideways. Chapters' figure builders need to know nothing of this
// (src/explorables/core/figures.py documents the layout it expects).
(function () {
  const PANEL = 160; // px a panel with tick labels needs (its tick labels at its left not counted)
  const BARE = 110; // px a panel without tick labels needs (pictures, small multiples)
  const CHAR = 0.54; // a character's width, in font sizes (plotly's sans-serif)
  const MIN_HEIGHT = 140; // px: the least height of a panel

  const copy = (value) => (value === undefined ? undefined : JSON.parse(JSON.stringify(value)));
  const plain = (value) =>
    (typeof value === "string" ? value : (value && value.text) || "").replace(/<br\s*\/?>/gi, " ").replace(/<[^>]*>/g, "");

  // wrap text (plotly's markup allowed) into lines of at most `px` pixels, at spaces
  function wrap(text, px, size) {
    if (typeof text !== "string" || !text) return text;
    const perLine = Math.max(8, Math.floor(px / (CHAR * (size || 12))));
    if (plain(text).length <= perLine || /<br/i.test(text)) return text;
    // split at spaces outside tags (<span style='...'> has spaces of its own)
    const words = text.replace(/<[^>]*>/g, (tag) => tag.replace(/ /g, "\u0001")).split(" ").map((w) => w.replace(/\u0001/g, " "));
    const lines = [];
    let line = "";
    for (const word of words) {
      const next = line ? line + " " + word : word;
      if (plain(next).length > perLine && line) {
        lines.push(line);
        line = word;
      } else line = next;
    }
    if (line) lines.push(line);
    return lines.join("<br>");
  }
  const lineCount = (text) => (typeof text === "string" ? text.split(/<br\s*\/?>/i).length : 0);

  // the subplot grid: one panel per x axis that has a domain and an anchoring y axis
  function panelsOf(layout) {
    const panels = [];
    for (const [key, axis] of Object.entries(layout)) {
      if (!/^xaxis\d*$/.test(key) || !axis || !Array.isArray(axis.domain) || axis.overlaying) continue;
      const anchor = axis.anchor || "y";
      if (!/^y\d*$/.test(anchor)) continue;
      const ykey = "yaxis" + anchor.slice(1);
      const yaxis = layout[ykey] || {};
      if (!Array.isArray(yaxis.domain)) continue;
      panels.push({ xkey: key, ykey, xname: "x" + key.slice(5), xd: axis.domain.slice(), yd: yaxis.domain.slice() });
    }
    return panels;
  }

  function grid(panels) {
    const starts = [...new Set(panels.map((p) => p.xd[0].toFixed(3)))].map(Number).sort((a, b) => a - b);
    const tops = [...new Set(panels.map((p) => p.yd[1].toFixed(3)))].map(Number).sort((a, b) => b - a);
    for (const p of panels) {
      p.col = starts.indexOf(Number(p.xd[0].toFixed(3)));
      p.row = tops.indexOf(Number(p.yd[1].toFixed(3)));
      p.span = starts.filter((s) => s >= p.xd[0] - 1e-3 && s < p.xd[1] - 1e-3).length;
    }
    panels.sort((a, b) => a.row - b.row || a.col - b.col);
    return { columns: starts.length, rows: tops.length };
  }

  const ticksShown = (axis) => axis && axis.visible !== false && axis.showticklabels !== false;
  const titleOf = (axis) => (axis && axis.title && (typeof axis.title === "string" ? axis.title : axis.title.text)) || "";

  // plotly.py's HTML fixes the height of the figure's wrapper (and the figure fills it): follow it
  function setHeight(gd, px) {
    gd.style.height = px + "px";
    const wrapper = gd.parentElement;
    if (wrapper && wrapper.style.height && wrapper.children.length <= 2) wrapper.style.height = px + "px";
  }

  function fit(gd) {
    if (!window.Plotly || !gd.layout || !gd._fullLayout || !gd.parentElement) return;
    const width = Math.floor(gd.parentElement.clientWidth);
    if (!width || String(width) === gd.dataset.fittedWidth) return;
    if (!gd._explorablesOriginal) {
      const L = gd.layout;
      const F = gd._fullLayout;
      gd._explorablesOriginal = { layout: copy(L), height: F.height, margin: copy(F.margin), size: copy(F._size) };
    }
    gd.dataset.fittedWidth = String(width);
    const update = plan(gd, width);
    delete gd.dataset.belowCleared;
    delete gd.dataset.topCleared;
    gd.style.minWidth = "";
    if (update.height) setHeight(gd, update.height);
    // buttons that become a drop-down: plotly redraws a menu whose type changes only from scratch
    const menus = update.layout.updatemenus ? window.Plotly.relayout(gd, { updatemenus: [] }) : Promise.resolve();
    return menus.then(() => window.Plotly.relayout(gd, update.layout)).then(() => {
      for (const [index, style] of update.restyle) window.Plotly.restyle(gd, style, [index]);
    });
  }

  function plan(gd, width) {
    const original = gd._explorablesOriginal;
    const L = original.layout;
    const margin = original.margin;
    const oldPlotHeight = original.size.h;
    const font = (L.font && L.font.size) || 12;
    const out = { layout: { autosize: true, width: null }, restyle: [], height: null };
    const plotWidth = width - margin.l - margin.r;

    // a legend beside the panels goes below them on a narrow column
    const legend = L.legend || {};
    const tracesInLegend = (gd.data || []).filter((t) => t.showlegend !== false && t.name).length;
    const legendShown = L.showlegend === true || (L.showlegend !== false && tracesInLegend > 1);
    const legendRight = legendShown && legend.orientation !== "h" && (legend.x === undefined || legend.x >= 1);
    const longestName = Math.max(0, ...(gd.data || []).map((t) => plain(t.name).length));
    const legendWidth = legendRight ? 40 + CHAR * font * longestName : 0;
    const legendBelow = legendRight && plotWidth - legendWidth < 0.6 * width;

    // figure title
    if (L.title) {
      const text = typeof L.title === "string" ? L.title : L.title.text;
      const full = gd._fullLayout.title || {};
      const size = (L.title.font && L.title.font.size) || (full.font && full.font.size) || font + 5;
      const wrapped = wrap(text, width - 20, size);
      if (wrapped !== text) {
        out.layout["title.text"] = wrapped;
        out.extraTop = (lineCount(wrapped) - 1) * 1.3 * size;
      }
    }
    // buttons in a row wider than the figure: a drop-down
    const menus = copy(L.updatemenus || []);
    let dropdowns = false;
    menus.forEach((menu) => {
      if (menu.type !== "buttons" || (menu.direction && menu.direction !== "left" && menu.direction !== "right")) return;
      const needed = (menu.buttons || []).reduce((sum, b) => sum + CHAR * font * plain(b.label).length + 22, 0);
      if (needed > width - 20) {
        Object.assign(menu, { type: "dropdown", direction: "down", showactive: true });
        dropdowns = true;
      }
    });

    const panels = panelsOf(L);
    let plotHeight = oldPlotHeight;
    if (panels.length > 1) {
      plotHeight = arrange(gd, panels, L, width, plotWidth - (legendBelow ? 0 : legendWidth), font, out);
    } else {
      // one panel: wrap a long x-axis title, a long y-axis title, long notes above or below it
      const t = titleOf(L.xaxis);
      const wrapped = wrap(t, plotWidth, font);
      if (wrapped !== t) {
        out.layout["xaxis.title.text"] = wrapped;
        out.extraBottom = (lineCount(wrapped) - 1) * 1.3 * font;
      }
      const yt = titleOf(L.yaxis);
      const ywrapped = wrap(yt, oldPlotHeight - 10, font);
      if (ywrapped !== yt) {
        out.layout["yaxis.title.text"] = ywrapped;
        out.layout["margin.l"] = margin.l + (lineCount(ywrapped) - 1) * 1.3 * font;
      }
      const notes = copy(L.annotations || []);
      let wrappedNotes = false;
      for (const note of notes) {
        if ((note.xref || "paper") !== "paper" || note.showarrow || Math.abs(note.textangle || 0) === 90) continue;
        const text = wrap(note.text, plotWidth - 10, (note.font && note.font.size) || font);
        if (text !== note.text) {
          note.text = text;
          wrappedNotes = true;
        }
      }
      if (wrappedNotes) out.layout.annotations = notes;
    }
    // legend entries longer than the figure is wide
    if (legendBelow || legend.orientation === "h") {
      (gd.data || []).forEach((trace, index) => {
        if (trace.showlegend === false || typeof trace.name !== "string") return;
        const name = wrap(trace.name, width - 90, (legend.font && legend.font.size) || font);
        if (name !== trace.name) out.restyle.push([index, { name }]);
      });
    }

    // what sits above or below the panels keeps its distance from them in px
    const keep = (y) => (y < 0 ? (y * oldPlotHeight) / plotHeight : y > 1 ? 1 + ((y - 1) * oldPlotHeight) / plotHeight : y);
    const belowShift = (out.extraBottom || 0) / plotHeight;
    if (legendBelow) {
      Object.assign(out.layout, {
        "legend.orientation": "h", "legend.x": 0, "legend.xanchor": "left", "legend.yanchor": "top",
        "legend.y": -(50 + (out.extraBottom || 0)) / plotHeight,
      }); // prettier-ignore
    } else if (legend.y !== undefined && plotHeight !== oldPlotHeight) out.layout["legend.y"] = keep(legend.y) - (legend.y < 0 ? belowShift : 0);
    else if (legend.y !== undefined && legend.y < 0 && belowShift) out.layout["legend.y"] = legend.y - belowShift;
    (L.sliders || []).forEach((slider, i) => {
      const y = slider.y === undefined ? 0 : slider.y;
      if (y <= 0 && (plotHeight !== oldPlotHeight || belowShift)) out.layout[`sliders[${i}].y`] = keep(y) - belowShift;
    });
    menus.forEach((menu) => {
      const y = menu.y === undefined ? 1 : menu.y;
      if ((y > 1 || y < 0) && plotHeight !== oldPlotHeight) menu.y = keep(y);
    });
    if (dropdowns || plotHeight !== oldPlotHeight) out.layout.updatemenus = menus; // whole: plotly redraws them
    // the margins plotly had pushed (for a legend, a slider, buttons below or above the panels) are
    // kept as they were, so that the panels get the height planned for them
    const size = original.size;
    const top = Math.max(margin.t, size.t) + (out.extraTop || 0);
    const bottom = Math.max(margin.b, size.b) + (out.extraBottom || 0) + (legendBelow ? 30 + 18 * Math.ceil((tracesInLegend * 110) / width) : 0);
    if (top !== margin.t) out.layout["margin.t"] = top;
    if (bottom !== margin.b) out.layout["margin.b"] = bottom;
    const height = Math.round(top + bottom + plotHeight);
    if (Math.abs(height - original.height) > 1 || gd.dataset.fittedHeight) {
      out.layout.height = height;
      out.height = height;
      gd.dataset.fittedHeight = "1";
    }
    return out;
  }

  // lay the panels out again in as many columns as fit; returns the new height of the plot area
  function arrange(gd, panels, L, width, plotWidth, font, out) {
    const { columns, rows } = grid(panels);
    const original = gd._explorablesOriginal;
    const oldPlotHeight = original.size.h;
    const bare = panels.every((p) => !ticksShown(L[p.ykey]));
    const need = panels.every((p) => !ticksShown(L[p.xkey]) && !ticksShown(L[p.ykey])) ? BARE : PANEL;
    const yTitled = panels.some((p) => titleOf(L[p.ykey]));
    const gap = (bare ? 12 : 40) + (yTitled ? 16 : 0);
    let perRow = Math.max(1, Math.min(columns, Math.floor((plotWidth + gap) / (need + gap))));
    if (perRow < columns && panels.some((p) => p.span > 1)) perRow = 1;
    if (perRow < columns) perRow = Math.ceil(columns / Math.ceil(columns / perRow)); // balanced rows
    const stacked = perRow < columns;
    const colWidth = (plotWidth - (perRow - 1) * gap) / perRow;

    // titles: annotations in paper coordinates over a panel (subplot and column titles) or rotated
    // at the right of a row (row titles); other annotations stay where they are
    const notes = copy(L.annotations || []);
    const rowTitle = {};
    const rightmost = Math.max(...panels.map((p) => p.xd[1]));
    notes.forEach((note, i) => {
      if ((note.xref || "paper") !== "paper" || (note.yref || "paper") !== "paper" || note.showarrow) return;
      if (Math.abs(note.textangle || 0) === 90 && note.x >= rightmost - 1e-3) {
        const row = panels.find((p) => note.y >= p.yd[0] - 1e-3 && note.y <= p.yd[1] + 1e-3);
        if (row) rowTitle[row.row] = i;
        return;
      }
      let best = null;
      for (const p of panels) {
        const above = note.y - p.yd[1];
        if (note.x >= p.xd[0] - 1e-3 && note.x <= p.xd[1] + 1e-3 && above >= -0.02 && above < 0.35) {
          if (!best || above < note.y - best.yd[1]) best = p;
        }
      }
      if (best && best.title === undefined) best.title = i;
    });
    // column titles: only the top row has titles; repeat them when columns stack
    const titledRows = new Set(panels.filter((p) => p.title !== undefined).map((p) => p.row));
    const columnTitles = rows > 1 && titledRows.size === 1 && titledRows.has(0);
    if (columnTitles && stacked) {
      for (const p of panels) {
        if (p.title !== undefined) continue;
        const head = panels.find((q) => q.row === 0 && q.col === p.col && q.title !== undefined);
        if (head) {
          notes.push(copy(notes[head.title]));
          p.title = notes.length - 1;
        }
      }
    }

    // the columns fit and no row is titled: the panels stay where they are, their titles go top-left
    if (!stacked && !Object.keys(rowTitle).length) {
      for (const p of panels) {
        if (p.title === undefined) continue;
        const note = notes[p.title];
        const colPx = (p.xd[1] - p.xd[0]) * plotWidth;
        note.text = wrap(note.text, colPx, (note.font && note.font.size) || font);
        Object.assign(note, { x: p.xd[0], xanchor: "left", align: "left" });
      }
      out.layout.annotations = notes;
      return oldPlotHeight;
    }

    // new rows: each original row starts a new one
    const newRows = [];
    for (let r = 0; r < rows; r++) {
      const inRow = panels.filter((p) => p.row === r);
      for (let k = 0; k < inRow.length; k += perRow) newRows.push({ from: r, first: k === 0, panels: inRow.slice(k, k + perRow) });
    }
    const lineHeight = 1.3 * font;
    const ticksBelow = (p) => (ticksShown(L[p.xkey]) ? 2.2 * font : 4) + (titleOf(L[p.xkey]) ? lineHeight * lineCount(wrap(titleOf(L[p.xkey]), colWidth, font)) + 8 : 0);
    let y = 0; // px from the top of the plot area
    const placed = [];
    newRows.forEach((row, j) => {
      if (j > 0) y += Math.max(...newRows[j - 1].panels.map(ticksBelow)) + 16;
      const heading = row.first && rowTitle[row.from] !== undefined ? lineHeight + 6 : 0;
      let titleLines = 0;
      for (const p of row.panels) {
        if (p.title === undefined) continue;
        const note = notes[p.title];
        note.text = wrap(note.text, colWidth, (note.font && note.font.size) || font);
        titleLines = Math.max(titleLines, lineCount(note.text));
      }
      const titles = titleLines ? titleLines * lineHeight + 4 : 0;
      if (j === 0) y = Math.max(0, heading + titles - Math.max(original.margin.t, original.size.t) + 6); // the first titles sit in the top margin
      else y += heading + titles;
      const oldHeight = oldPlotHeight * Math.max(...row.panels.map((p) => p.yd[1] - p.yd[0]));
      const height = stacked ? Math.max(MIN_HEIGHT, Math.min(Math.max(oldHeight, 0.75 * colWidth), 1.1 * colWidth, 360)) : Math.max(oldHeight, MIN_HEIGHT * (bare ? 0.6 : 1));
      placed.push({ row, top: y, height, heading });
      y += height;
    });
    const plotHeight = y;
    const frac = (px) => 1 - px / plotHeight;
    const xOf = (k) => (k * (colWidth + gap)) / plotWidth;
    const plotFrac = plotWidth / (width - original.margin.l - original.margin.r); // room kept for a legend at the right

    for (const { row, top, height, heading } of placed) {
      row.panels.forEach((p, k) => {
        const xd = [xOf(k) * plotFrac, Math.min(1, (xOf(k) + colWidth / plotWidth) * plotFrac)];
        const yd = [Math.max(0, frac(top + height)), Math.min(1, frac(top))];
        out.layout[`${p.xkey}.domain`] = xd;
        out.layout[`${p.ykey}.domain`] = yd;
        for (const [key, axis] of Object.entries(L)) {
          if (/^yaxis\d*$/.test(key) && axis && axis.overlaying === "y" + p.ykey.slice(5)) out.layout[`${key}.domain`] = yd;
        }
        // shared y axes show their tick labels only in the first column: a panel that now starts a row shows them
        const yaxis = L[p.ykey] || {};
        if (stacked && k === 0 && yaxis.visible !== false && yaxis.showticklabels === false &&
            panels.some((q) => q.row === p.row && ticksShown(L[q.ykey]))) out.layout[`${p.ykey}.showticklabels`] = true;
        const xt = titleOf(L[p.xkey]);
        if (xt) out.layout[`${p.xkey}.title.text`] = wrap(xt, colWidth, font);
        if (p.title !== undefined) {
          Object.assign(notes[p.title], { x: xd[0], xanchor: "left", align: "left", y: yd[1], yanchor: "bottom", yshift: 0, textangle: 0 });
        }
        // a colour bar beside its own panel
        (gd.data || []).forEach((trace, index) => {
          if ((trace.xaxis || "x") === p.xname && trace.showscale !== false && /heatmap|contour|histogram2d/.test(trace.type || "")) {
            out.restyle.push([index, { "colorbar.y": (yd[0] + yd[1]) / 2, "colorbar.yanchor": "middle", "colorbar.len": yd[1] - yd[0], "colorbar.x": xd[1] + 0.01, "colorbar.xanchor": "left", "colorbar.thickness": 10 }]); // prettier-ignore
          }
        });
      });
      if (heading) {
        const note = notes[rowTitle[row.from]];
        const titled = row.panels.some((p) => p.title !== undefined);
        Object.assign(note, {
          text: "<b>" + wrap(plain(note.text), plotWidth, font) + "</b>", textangle: 0, x: 0, xanchor: "left",
          y: frac(top - (titled ? lineCount(notes[row.panels.find((p) => p.title !== undefined).title].text) * lineHeight + 4 : 0)),
          yanchor: "bottom", xshift: 0, yshift: 0,
        }); // prettier-ignore
      }
    }
    // other annotations in paper coordinates outside the panels keep their px distance
    notes.forEach((note, i) => {
      if (panels.some((p) => p.title === i) || Object.values(rowTitle).includes(i)) return;
      if ((note.yref || "paper") === "paper" && typeof note.y === "number" && (note.y < 0 || note.y > 1)) {
        note.y = note.y < 0 ? (note.y * oldPlotHeight) / plotHeight : 1 + ((note.y - 1) * oldPlotHeight) / plotHeight;
      }
    });
    out.layout.annotations = notes;
    return plotHeight;
  }

  function overlap(a, b) {
    return a.width > 0 && b.width > 0 && a.right > b.left && a.left < b.right && a.bottom > b.top && a.top < b.bottom;
  }

  // how far `box` must move down to clear the boxes of `labels` it overlaps
  function pushBelow(box, labels) {
    let push = 0;
    for (const label of labels) {
      const r = label.getBoundingClientRect();
      if (overlap(r, box)) push = Math.max(push, r.bottom - box.top + 6);
    }
    return push;
  }

  // a slider or a legend below the panels that lands on x-axis labels (or the legend on the
  // slider) moves down, and the figure grows by as much
  function clearBelow(gd) {
    const full = gd._fullLayout;
    if (!full || gd.dataset.belowCleared) return;
    gd.dataset.belowCleared = "1";
    const labels = [...gd.querySelectorAll('g[class^="g-x"][class$="title"] text, .xaxislayer-above text')];
    const update = {};
    let push = 0;
    const slider = gd.querySelector(".slider-container");
    if (slider && (full.sliders || []).length === 1 && full.sliders[0].y <= 0.01) {
      push = pushBelow(slider.getBoundingClientRect(), labels);
      if (push > 0) update["sliders[0].y"] = full.sliders[0].y - push / full._size.h;
    }
    const legend = gd.querySelector(".legend");
    if (legend && full.legend && full.legend.orientation === "h" && full.legend.y < 0) {
      const box = legend.getBoundingClientRect();
      const moved = { top: box.top + push, bottom: box.bottom + push, left: box.left, right: box.right, width: box.width };
      const extra = pushBelow(moved, slider ? [...labels, ...slider.querySelectorAll("rect, text")] : labels);
      if (push + extra > 0) update["legend.y"] = full.legend.y - (push + extra) / full._size.h;
      push += extra;
    }
    if (push <= 0) return;
    const height = full.height + push;
    setHeight(gd, height);
    return window.Plotly.relayout(gd, { ...update, "margin.b": full.margin.b + push, height: height });
  }

  // titles and notes above the panels that stick out of the figure's top, or that the figure's
  // title lands on: the top margin grows (the title stays at the top), and the figure with it
  function clearTop(gd) {
    const full = gd._fullLayout;
    if (!full || gd.dataset.topCleared) return;
    gd.dataset.topCleared = "1";
    const top = gd.getBoundingClientRect().top;
    const notes = [...gd.querySelectorAll(".infolayer .annotation-text, .infolayer .annotation text")].map((t) => t.getBoundingClientRect());
    const title = gd.querySelector(".g-gtitle text, .gtitle");
    let push = Math.max(0, ...notes.map((r) => top - r.top + 4));
    const update = {};
    if (title && title.textContent.trim()) {
      const t = title.getBoundingClientRect();
      push = Math.max(push, top - t.top + 4, ...notes.filter((r) => overlap(r, t)).map((r) => t.bottom - r.top + 4));
      // (plotly sets a title's first line under y: its top sits a few px above y)
      if (push > 0) Object.assign(update, { "title.yref": "container", "title.yanchor": "top", "title.pad.t": 0 });
    }
    if (push <= 0) return;
    const height = full.height + push;
    if (update["title.yref"]) update["title.y"] = 1 - 14 / height;
    setHeight(gd, height);
    return window.Plotly.relayout(gd, { ...update, "margin.t": full.margin.t + push, height });
  }

  function fitAll() {
    document.querySelectorAll(".js-plotly-plot").forEach((gd) => {
      Promise.resolve(fit(gd))
        .then(() => clearTop(gd))
        .then(() => clearBelow(gd))
        .catch((error) => console.warn("figure-widths.js:", error));
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", fitAll);
  else fitAll();
  window.addEventListener("load", fitAll);
  let resized = null;
  window.addEventListener("resize", () => {
    clearTimeout(resized);
    resized = setTimeout(fitAll, 150);
  });
  // figures inside widget outputs are drawn later, by the widget manager
  let pending = null;
  new MutationObserver(() => {
    clearTimeout(pending);
    pending = setTimeout(fitAll, 100);
  }).observe(document.body, { childList: true, subtree: true });
})();
