// Make every sidebar button work (pydata-sphinx-theme 0.17 + sphinx-book-theme 1.3).
//
// Both themes bind their sidebar behaviour to document.querySelector(".primary-toggle"), i.e. to
// the FIRST such button, which in this theme pair is a header button hidden at every width; the
// visible button in the article header gets no listener, so on phones the menu never opens and on
// wide screens the sidebar never hides (pydata-sphinx-theme issue 2451). We forward clicks on every
// other toggle to that first one, so the themes' own code (modal below 992 px, collapse above)
// runs unchanged. The same for ".secondary-toggle" (the page-contents sidebar).
document.addEventListener("DOMContentLoaded", () => {
  for (const selector of [".primary-toggle", ".secondary-toggle"]) {
    const [bound, ...others] = document.querySelectorAll(selector);
    if (!bound) continue;
    for (const button of others) {
      button.addEventListener("click", (event) => {
        event.preventDefault();
        event.stopPropagation();
        button.blur();
        bound.click();
      });
    }
  }
});
