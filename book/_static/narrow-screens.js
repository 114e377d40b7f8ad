// Claims tables and formulas that read on a phone (book/_static/explorables.css styles them).
//
// A chapter's claims tables are Markdown tables (explorables.core.tables), recognised here by a
// verdict column: "reproduced?" (gates and the paper's claims), "holds?" (our checks) or "same on
// all?" (the seed study). Each such table gets the class `claims-table`; its verdict cells the
// class `verdict` and one of `verdict-yes`, `verdict-partly`, ..., from the verdict's first word;
// its kind cells ("gate", "claim") the class `claim-kind`; every cell a `data-label` with its
// column's header. Below 600 px the CSS turns each row into a card: kind and verdict first,
// coloured, then the other cells under their headers.
(function () {
  const VERDICT = /^(reproduced\?|holds\?|same on all\?|verdict)$/i;
  const KIND = /^(row|kind)$/i;
  const WORDS = ["yes", "partly", "no", "unclear", "untested", "pass", "fail"];

  function mark(table) {
    if (table.classList.contains("claims-table")) return;
    const heads = [...table.querySelectorAll("thead th")].map((th) => th.textContent.trim());
    const verdict = heads.findIndex((h) => VERDICT.test(h));
    if (verdict < 0) return;
    table.classList.add("claims-table");
    table.querySelectorAll("thead th")[verdict].classList.add("verdict-head");
    const kind = heads.findIndex((h) => KIND.test(h));
    for (const row of table.querySelectorAll("tbody tr")) {
      [...row.children].forEach((cell, i) => {
        if (heads[i]) cell.dataset.label = heads[i];
      });
      const cell = row.children[verdict];
      if (!cell) continue;
      cell.classList.add("verdict");
      const word = cell.textContent.trim().split(/[^a-z]/i)[0].toLowerCase();
      if (WORDS.includes(word)) {
        cell.classList.add("verdict-" + word);
        row.classList.add("claim-" + word);
      }
      if (kind >= 0 && row.children[kind] && kind !== verdict) row.children[kind].classList.add("claim-kind");
    }
  }

  function markAll() {
    document.querySelectorAll("article table").forEach(mark);
  }

  // An inline formula wider than its line (MathJax 3 does not break lines) gets the class
  // `math-wide`: it scrolls inside the text instead of being cut off.
  function markWideMath() {
    document.querySelectorAll('mjx-container:not([display="true"])').forEach((math) => {
      math.classList.remove("math-wide");
      const block = math.parentElement && math.parentElement.closest("p, li, td, dd, dt, div, span.caption-text");
      if (!block) return;
      const r = math.getBoundingClientRect();
      const b = block.getBoundingClientRect();
      if (r.width > b.width + 1 || r.right > b.right + 1) math.classList.add("math-wide");
    });
  }
  function whenTypeset() {
    const startup = window.MathJax && window.MathJax.startup;
    if (startup && startup.promise) startup.promise.then(markWideMath);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", markAll);
  else markAll();
  window.addEventListener("load", whenTypeset);
  let resized = null;
  window.addEventListener("resize", () => {
    clearTimeout(resized);
    resized = setTimeout(markWideMath, 200);
  });
})();
