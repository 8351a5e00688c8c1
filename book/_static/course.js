/* The course's own script (Jupyter Book includes every .js in _static/).

   Two things a narrow column needs that the theme does not do:

   1. A displayed equation wider than the column is scaled down until it fits
      (MathJax 3 does not break lines), but not below MIN_EQUATION_SCALE of its
      size: the book's long equations are written as aligned lines short enough
      for a phone, and tests/site/test_site_layout.py checks that each fits.
   2. A table wider than the column scrolls inside its box; the line above it
      says so, and the box takes keyboard focus so that arrow keys scroll it.
   3. Every figure opens full size: its image is a button (Tab, then Enter or a
      tap) that shows it in a dialog at its own size, one pixel of the image to
      one pixel of the page, which scrolls where it is wider than the window (a
      phone); Escape, the close button or a click beside it closes the dialog,
      and the focus goes back to the figure.  Its text is then as large as the
      figure was drawn (the strict build checks 9 px or more); nothing is
      fetched but the image the page already shows.
   4. The search page's snippets read maths as text ("softmax(QKᵀ / √d_k)"),
      as the search index does (plainMaths mirrors plain_maths in
      _ext/course_sphinx.py), not as LaTeX.
   5. The search button's name includes what it shows ("Search Ctrl+K"), as
      WCAG 2.5.3 asks of a control with a visible label, and the colour-mode
      button's icons are not read as its label.
   6. A table coloured by its values keeps its text readable on every cell.
*/
(function () {
  "use strict";

  const MIN_EQUATION_SCALE = 0.7;
  const HINT_CLASS = "course-scroll-hint";
  const HINT_TEXT = "(The table scrolls sideways.)";

  function fitEquations() {
    for (const box of document.querySelectorAll("div.math")) {
      const equation = box.querySelector('mjx-container[display="true"]');
      const maths = equation && equation.querySelector(":scope > mjx-math");
      if (!maths) continue;
      if (equation.dataset.courseFontSize === undefined) {
        // MathJax sets its own font size on the container (a percentage); keep it
        equation.dataset.courseFontSize = equation.style.fontSize || "";
      }
      equation.style.fontSize = equation.dataset.courseFontSize;
      const natural = maths.getBoundingClientRect().width;
      const room = box.clientWidth;
      if (natural <= room || natural === 0) continue;
      const scale = Math.max(MIN_EQUATION_SCALE, (room - 2) / natural);
      const size = parseFloat(getComputedStyle(equation).fontSize);
      equation.style.fontSize = (size * scale).toFixed(2) + "px";
    }
  }

  function scrollBox(table) {
    // the element that scrolls a wide table: the theme's wrapper, or a cell output's box
    for (let element = table.parentElement; element; element = element.parentElement) {
      const overflow = getComputedStyle(element).overflowX;
      if (overflow === "auto" || overflow === "scroll") return element;
      if (element.matches("article, main")) return null;
    }
    return null;
  }

  function markWideTables() {
    for (const hint of document.querySelectorAll("p." + HINT_CLASS + "[data-course-added]")) {
      hint.remove();
    }
    for (const table of document.querySelectorAll("article table")) {
      const box = scrollBox(table);
      if (!box || box.scrollWidth <= box.clientWidth + 1) continue;
      box.tabIndex = 0;
      if (!box.getAttribute("aria-label")) box.setAttribute("aria-label", "table, scrolls sideways");
      const container = box.closest(".course-scroll") || box;
      const before = container.previousElementSibling;
      if (before && before.classList.contains(HINT_CLASS)) continue;
      const hint = document.createElement("p");
      hint.className = HINT_CLASS;
      hint.dataset.courseAdded = "";
      hint.textContent = HINT_TEXT;
      container.parentElement.insertBefore(hint, container);
    }
  }

  // --- 4. maths in the search page's snippets -------------------------------------------

  const LATEX_SYMBOLS = {
    top: "ᵀ", cdot: "·", times: "×", in: "∈", le: "≤", leq: "≤", ge: "≥", geq: "≥", neq: "≠",
    approx: "≈", sum: "Σ", prod: "Π", infty: "∞", to: "→", rightarrow: "→", leftarrow: "←",
    mapsto: "↦", ldots: "…", dots: "…", cdots: "…", odot: "⊙", oplus: "⊕", sqrt: "√", mid: "|",
    partial: "∂", nabla: "∇", pm: "±", propto: "∝", sim: "~", alpha: "α", beta: "β", gamma: "γ",
    delta: "δ", epsilon: "ε", varepsilon: "ε", zeta: "ζ", eta: "η", theta: "θ", kappa: "κ",
    lambda: "λ", mu: "μ", nu: "ν", xi: "ξ", pi: "π", rho: "ρ", sigma: "σ", tau: "τ", phi: "φ",
    varphi: "φ", chi: "χ", psi: "ψ", omega: "ω", Gamma: "Γ", Delta: "Δ", Theta: "Θ", Lambda: "Λ",
    Pi: "Π", Sigma: "Σ", Phi: "Φ", Psi: "Ψ", Omega: "Ω",
  };
  const LATEX_SILENT = new Set([
    "mathrm", "mathbf", "mathit", "mathcal", "mathsf", "mathtt", "mathbb", "boldsymbol", "bm", "text",
    "textrm", "textit", "textbf", "operatorname", "displaystyle", "textstyle", "scriptstyle", "left",
    "right", "big", "Big", "bigg", "Bigg", "hat", "tilde", "bar", "vec", "overline", "underbrace",
    "overbrace", "nonumber", "notag", "quad", "qquad", "label", "tag", "limits",
  ]);

  function latexGroup(text, start) {   // the {...} group (or one character) at start: [content, end]
    while (start < text.length && /\s/.test(text[start])) start++;
    if (text[start] !== "{") return [text.slice(start, start + 1), start + 1];
    let depth = 0;
    for (let end = start; end < text.length; end++) {
      if (text[end] === "{") depth++;
      else if (text[end] === "}") depth--;
      if (depth === 0) return [text.slice(start + 1, end), end + 1];
    }
    return [text.slice(start + 1), text.length];
  }

  function plainMaths(tex) {
    let text = tex.replace(/\\\\(\[[^\]]*\])?/g, " ");                   // line breaks, \\[2pt]
    text = text.replace(/\\[()[\]]|^\s*\$\$?|\$\$?\s*$/g, " ");       // delimiters: \( \) \[ \] $$
    text = text.replace(/\\(begin|end)\{[^}]*\}|\\(label|tag)\{[^}]*\}/g, " ");
    let found;
    while ((found = /\\[dt]?frac(?![A-Za-z])/.exec(text))) {
      const [numerator, middle] = latexGroup(text, found.index + found[0].length);
      const [denominator, after] = latexGroup(text, middle);
      text = text.slice(0, found.index) + "(" + numerator + ")/(" + denominator + ")" + text.slice(after);
    }
    text = text.replace(/&|\\[,;:! ]|~/g, " ").replace(/\\([{}_%#$])/g, "$1");
    text = text.replace(/\\([A-Za-z]+)/g, function (_, name) {
      return name in LATEX_SYMBOLS ? LATEX_SYMBOLS[name] : (LATEX_SILENT.has(name) ? "" : name);
    });
    return text.replace(/[{}]/g, "").replace(/\^ᵀ/g, "ᵀ").split(/\s+/).join(" ").trim();
  }

  // Sphinx's search page makes each snippet from the result's page (Search.htmlToText): read
  // its maths (MathJax's \( ... \) before typesetting) as text first.  searchtools.js defines
  // Search (a global constant, not a property of window) after this script and searches when
  // the document is ready: patched then, before it searches.
  function plainSnippets() {
    const search = typeof Search !== "undefined" ? Search : window.Search;
    if (!search || typeof search.htmlToText !== "function" || search.coursePlain) return;
    const htmlToText = search.htmlToText;
    search.htmlToText = function (htmlString, anchor) {
      const page = new DOMParser().parseFromString(htmlString, "text/html");
      for (const maths of page.querySelectorAll(".math")) {
        const number = maths.querySelector(".eqno");   // a numbered equation's "(1.1)"
        const label = number ? number.textContent.replace("#", "").trim() + " " : "";
        if (number) number.remove();
        maths.replaceWith(page.createTextNode(" " + label + plainMaths(maths.textContent) + " "));
      }
      return htmlToText.call(this, page.documentElement.outerHTML, anchor);
    };
    search.coursePlain = true;
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", plainSnippets);
  else plainSnippets();
  window.coursePlainMaths = plainMaths;   // for the site's tests

  // --- 5. the search button's name ------------------------------------------------------

  function hideThemeIcons(button) {
    for (const icon of button.querySelectorAll(".theme-switch")) {
      if (icon.getAttribute("aria-hidden") === "true" && !icon.querySelector("title")) continue;
      icon.setAttribute("aria-hidden", "true");
      icon.removeAttribute("role");
      icon.removeAttribute("aria-labelledby");
      icon.removeAttribute("title");
      for (const title of icon.querySelectorAll("title")) title.remove();
    }
  }

  function nameSearchButtons() {
    for (const button of document.querySelectorAll(".search-button__button[aria-label]")) {
      const shown = button.textContent.replace(/\s+/g, " ").trim();   // "Search Ctrl + K"
      if (shown && !button.getAttribute("aria-label").includes(shown)) button.removeAttribute("aria-label");
    }
    // the colour-mode button is named "Color mode"; its icons (titled "Light", "Dark", ...) only show it
    // (Font Awesome makes each icon an <svg role="img"> titled so, when it gets to it: watched)
    for (const button of document.querySelectorAll(".theme-switch-button")) {
      hideThemeIcons(button);
      new MutationObserver(function () { hideThemeIcons(button); })
        .observe(button, {childList: true, subtree: true});
    }
  }

  // --- 6. styled tables: text that reads on its cell's colour ------------------------------

  function luminance(colour) {
    const [r, g, b] = (colour.match(/[\d.]+/g) || []).slice(0, 3).map(function (v) {
      v = +v / 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  }

  function contrast(a, b) {
    const [light, dark] = [luminance(a), luminance(b)].sort(function (x, y) { return y - x; });
    return (light + 0.05) / (dark + 0.05);
  }

  // A pandas table coloured by its values (Styler.background_gradient) picks white or black text
  // by its own threshold, which left white on viridis greens (2.1:1). Where a cell's text reads
  // under WCAG's 4.5:1 on its own colour, it becomes black or white, whichever reads better
  // (one of the two always reaches 4.5:1).
  function readableTableCells() {
    for (const cell of document.querySelectorAll("article .cell_output table td, article .cell_output table th")) {
      const style = getComputedStyle(cell);
      const background = style.backgroundColor;
      const channels = background.match(/[\d.]+/g) || [];
      if (channels.length < 3 || (channels.length === 4 && +channels[3] < 1)) continue;   // no colour of its own
      if (contrast(style.color, background) >= 4.5) continue;
      cell.style.color = contrast("rgb(0, 0, 0)", background) >= contrast("rgb(255, 255, 255)", background)
        ? "#000" : "#fff";
    }
  }

  // --- 3. figures full size ---------------------------------------------------------------

  const ZOOM_CLASS = "course-zoom";

  function figureName(image) {
    const figure = image.closest("figure");
    const number = figure && figure.querySelector(".caption-number");
    return number ? number.textContent.trim().replace(/\s+/g, " ") : "figure";
  }

  function caption(image) {
    const figure = image.closest("figure");
    const text = figure && figure.querySelector("figcaption");
    return text ? text.textContent.trim().replace(/\s+/g, " ") : "";
  }

  let lightbox = null;

  function makeLightbox() {
    const dialog = document.createElement("dialog");
    dialog.className = "course-lightbox";
    const bar = document.createElement("div");
    bar.className = "course-lightbox-bar";
    const title = document.createElement("p");
    title.className = "course-lightbox-title";
    title.id = "course-lightbox-title";
    const close = document.createElement("button");
    close.type = "button";
    close.className = "course-lightbox-close";
    close.setAttribute("aria-label", "Close the full-size figure");
    close.textContent = "\u00d7";
    bar.append(title, close);
    const view = document.createElement("div");
    view.className = "course-lightbox-view";
    view.tabIndex = 0;   // arrow keys scroll a figure wider than the window
    view.setAttribute("role", "group");
    view.setAttribute("aria-labelledby", title.id);
    const image = document.createElement("img");
    view.append(image);
    dialog.append(bar, view);
    dialog.setAttribute("aria-labelledby", title.id);
    // Closing gives the focus back to the figure's button at once. The dialog's "close" event
    // comes later, as a task of its own: a handler there could take the focus back from wherever
    // the reader (or a test) has moved it meanwhile.
    function closeAndReturn() {
      const from = dialog.courseOpener;
      dialog.courseOpener = null;
      dialog.close();
      if (from) from.focus();
    }
    close.addEventListener("click", closeAndReturn);
    // a click on the backdrop (the dialog itself, outside its content) closes it too
    dialog.addEventListener("click", function (event) { if (event.target === dialog) closeAndReturn(); });
    // Escape closes it (the browser's own "cancel" may be held back by its rules on user activation)
    dialog.addEventListener("keydown", function (event) {
      if (event.key === "Escape") {
        event.preventDefault();
        closeAndReturn();
      }
    });
    // closed another way (the browser's own cancel): return the focus, unless it has moved on
    dialog.addEventListener("close", function () {
      const from = dialog.courseOpener;
      dialog.courseOpener = null;
      const moved = document.activeElement && document.activeElement !== document.body
        && !dialog.contains(document.activeElement);
      if (from && !moved) from.focus();
    });
    document.body.append(dialog);
    return {dialog: dialog, title: title, view: view, image: image};
  }

  function openFigure(button, image) {
    lightbox = lightbox || makeLightbox();
    const shown = lightbox.image;
    shown.src = image.currentSrc || image.src;
    shown.alt = image.alt || "";
    // one pixel of the image to one CSS pixel: the size it was drawn at, and checked at
    shown.style.width = image.naturalWidth + "px";
    shown.style.height = image.naturalHeight + "px";
    const text = caption(image);
    lightbox.title.textContent = (text || figureName(image)) + " (full size)";
    lightbox.dialog.courseOpener = button;
    lightbox.dialog.showModal();
    lightbox.view.scrollTo(0, 0);
    lightbox.view.focus();
  }

  // What a figure's button is called: its number, and its alt text where it has one of its own
  // (myst-nb gives a cell's image its file name).
  function zoomName(image) {
    const alt = (image.getAttribute("alt") || "").trim();
    const ownAlt = alt && !/\.(png|jpe?g|svg|gif)$/i.test(alt);
    return "Open " + figureName(image) + " full size" + (ownAlt ? ": " + alt : "");
  }

  function makeFiguresZoomable() {
    const images = "article.bd-article figure img, article.bd-article .cell_output img";
    for (const image of document.querySelectorAll(images)) {
      if (image.closest("." + ZOOM_CLASS)) continue;
      // Sphinx links a sized figure to its file; the link opens it here instead (and still
      // leads to the file where scripts do not run).
      let opener = image.closest("a.image-reference");
      if (!opener) {
        if (image.closest("a, button")) continue;
        opener = document.createElement("button");
        opener.type = "button";
        image.parentElement.insertBefore(opener, image);
        opener.append(image);
      }
      opener.classList.add(ZOOM_CLASS);
      opener.setAttribute("aria-label", zoomName(image));
      opener.title = "Open full size";
      opener.addEventListener("click", function (event) {
        event.preventDefault();
        openFigure(opener, image);
      });
    }
  }

  function layOut() {
    fitEquations();
    markWideTables();
  }

  function start() {
    makeFiguresZoomable();
    nameSearchButtons();
    readableTableCells();
    const mathjax = window.MathJax && window.MathJax.startup && window.MathJax.startup.promise;
    (mathjax || Promise.resolve()).then(layOut);
    let pending = null;
    window.addEventListener("resize", function () {
      clearTimeout(pending);
      pending = setTimeout(layOut, 100);
    });
  }

  if (document.readyState === "complete") start();
  else window.addEventListener("load", start);
})();
