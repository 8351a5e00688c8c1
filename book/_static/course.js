/* The course's own script (Jupyter Book includes every .js in _static/).

   Two things a narrow column needs that the theme does not do:

   1. A displayed equation wider than the column is scaled down until it fits
      (MathJax 3 does not break lines), but not below MIN_EQUATION_SCALE of its
      size: the book's long equations are written as aligned lines short enough
      for a phone, and tests/site/test_site_layout.py checks that each fits.
   2. A table wider than the column scrolls inside its box; the line above it
      says so, and the box takes keyboard focus so that arrow keys scroll it.
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

  function layOut() {
    fitEquations();
    markWideTables();
  }

  function start() {
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
