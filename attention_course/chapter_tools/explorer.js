// The attention explorer: draws the attention maps that attention_course.chapter_tools.explorer
// embedded in the page as JSON, and lets the reader pick the example, the layer and the
// head, point at a query row (hover it, or Tab to the map and move with the arrow keys) to
// read where it attends, and (for the toy example) switch the 1/sqrt(d_k) scaling and the
// causal mask, recomputing the weights here in the page.
//
// Each group of controls is one Tab stop (WAI-ARIA's roving tab index): the examples (a
// toolbar), the heads (a grid, a row per layer) and the map's query rows (a list box); the
// arrow keys move inside a group, Enter or Space picks.
//
// Self-contained on purpose: no library, no request, so it works offline, from a file,
// in a saved page and in Jupyter. Every explorer on a page is set up once.
(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";
  var CELL = 24, CHAR = 7, PAD = 6;                             // the static picture's layout (explorer.py)
  var BAR_WIDTH = 12, BAR_MIN_LENGTH = 110, BAR_BANDS = 64;
  var made = 0;                                                 // explorers set up: unique ids

  function el(name, attrs, parent, ns) {
    var node = ns ? document.createElementNS(SVG, name) : document.createElement(name);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (parent) parent.appendChild(node);
    return node;
  }

  // matplotlib's rule for its colour table: weight w in [0, 1] has colour floor(w * N), the last for 1.
  function colour(colours, w) {
    return colours[Math.max(0, Math.min(colours.length - 1, Math.floor(w * colours.length)))];
  }

  // The colour bar, x px right, beside a map whose cells start `top` px down and are `length` px tall.
  function colourBar(colours, label, x, top, length) {
    length = Math.max(length, BAR_MIN_LENGTH);
    var band = length / BAR_BANDS, width = BAR_WIDTH + 3 * CHAR + 2 * PAD + 14, height = top + length + PAD;
    var svg = el("svg", {"class": "attention-explorer-colour-bar", x: x, width: width, height: height, role: "img",
                         "aria-label": "colour bar: viridis, " + label + " from 0 to 1"}, null, true);
    for (var k = 0; k < BAR_BANDS; k++) {                       // bottom (weight 0) to top (weight 1)
      el("rect", {x: PAD, y: top + length - (k + 1) * band, width: BAR_WIDTH, height: band + 0.5,
                  fill: colours[Math.floor((k + 0.5) / BAR_BANDS * colours.length)]}, svg, true);
    }
    [0, 0.5, 1].forEach(function (tick) {
      var y = top + length * (1 - tick);
      el("line", {x1: PAD + BAR_WIDTH, x2: PAD + BAR_WIDTH + 3, y1: y, y2: y, stroke: "currentColor"}, svg, true);
      el("text", {x: PAD + BAR_WIDTH + 5, y: y, "dominant-baseline": "middle", "class": "tick"},
         svg, true).textContent = String(tick);
    });
    var labelX = width - 4, labelY = top + length / 2;
    el("text", {x: labelX, y: labelY, transform: "rotate(-90 " + labelX + " " + labelY + ")",
                "text-anchor": "middle"}, svg, true).textContent = label;
    return svg;
  }

  // softmax(Q K^T [/ sqrt(d_k)]) with keys after the query hidden when causal: the toy's weights.
  function toyWeights(toy, scale, causal) {
    var d = toy.query[0].length, factor = scale ? 1 / Math.sqrt(d) : 1;
    return toy.query.map(function (q, i) {
      var scores = toy.key.map(function (k, j) {
        if (causal && j > i) return -Infinity;
        var s = 0;
        for (var c = 0; c < d; c++) s += q[c] * k[c];
        return s * factor;
      });
      var top = Math.max.apply(null, scores);
      var e = scores.map(function (s) { return s === -Infinity ? 0 : Math.exp(s - top); });
      var total = e.reduce(function (a, b) { return a + b; }, 0);
      return e.map(function (x) { return x / total; });
    });
  }

  function formatWeight(w) { return w.toFixed(2); }

  function Explorer(root) {
    this.root = root;
    this.id = "attention-explorer-" + (++made);
    this.data = JSON.parse(root.querySelector("script.attention-explorer-data").textContent);
    // row: the query row kept highlighted (Enter, Space or a click), or null
    this.state = {example: 0, layer: 0, head: 0, scale: true, causal: false, row: null};
    this.live = root.querySelector(".attention-explorer-live");
    this.build();
    root.querySelector(".attention-explorer-static").hidden = true;
    this.live.hidden = false;
    root.setAttribute("data-ready", "true");
  }

  Explorer.prototype.example = function () {
    var d = this.data;
    return d.toy ? {name: d.title, queries: d.toy.tokens, keys: d.toy.tokens} : d.examples[this.state.example];
  };

  // The (T_q, T_k) weights now on show.
  Explorer.prototype.weights = function () {
    var d = this.data, s = this.state;
    if (d.toy) return toyWeights(d.toy, s.scale, s.causal);
    return d.examples[s.example].weights[s.layer][s.head].map(function (row) {
      return row.map(function (v) { return v / d.precision; });
    });
  };

  Explorer.prototype.build = function () {
    var self = this, d = this.data, live = this.live;
    live.innerHTML = "";
    var controls = el("div", {"class": "attention-explorer-controls"}, live);
    if (d.toy) {
      [["scale", "divide the scores by √d_k"], ["causal", "causal mask"]].forEach(function (pair) {
        var option = el("span", {"class": "attention-explorer-option"}, controls);
        var box = el("input", {type: "checkbox", id: self.id + "-" + pair[0],
                               "class": "attention-explorer-" + pair[0]}, option);
        el("label", {"for": box.id}, option).textContent = pair[1];
        box.checked = self.state[pair[0]];
        box.addEventListener("change", function () { self.state[pair[0]] = box.checked; self.draw(); });
      });
    } else {
      if (d.examples.length > 1) {
        // A toolbar: one Tab stop (the example shown, or the one last moved to), arrow keys inside it.
        var examples = el("div", {"class": "attention-explorer-examples", role: "toolbar",
                                  "aria-label": "example (arrow keys move, Enter picks)"}, controls);
        d.examples.forEach(function (example, i) {
          var b = el("button", {type: "button", "data-example": i, tabindex: "-1"}, examples);
          b.textContent = example.name;
          b.addEventListener("click", function () {
            self.state.example = i; self.state.row = null; self.draw(); self.rove(examples, b);
          });
        });
        examples.addEventListener("keydown", function (event) { self.toolbarKey(event, examples); });
      }
      // A grid: a row per layer, a column per head ("head 2" in the row "layer 1"). One Tab stop
      // (the head shown, or the one last moved to); the arrow keys move, Enter or Space picks.
      // (laid out as a table, so that the heads line up in columns; its box scrolls if too wide)
      var box = el("div", {"class": "attention-explorer-heads-box"}, controls);
      var grid = el("div", {"class": "attention-explorer-heads", role: "grid",
                            "aria-label": "layer and head (arrow keys move, Enter picks)"}, box);
      d.layers.forEach(function (layerName, l) {
        var row = el("div", {"class": "attention-explorer-layer", role: "row"}, grid);
        el("span", {"class": "attention-explorer-layer-name", role: "rowheader"}, row).textContent = layerName;
        d.heads.forEach(function (headName, h) {
          var cell = el("span", {"class": "attention-explorer-head", role: "gridcell"}, row);
          var b = el("button", {type: "button", "data-layer": l, "data-head": h, tabindex: "-1",
                                "aria-label": layerName + ", " + headName}, cell);
          b.textContent = headName;
          b.addEventListener("click", function () {
            self.state.layer = l; self.state.head = h; self.draw(); self.rove(grid, b);
          });
        });
      });
      grid.addEventListener("keydown", function (event) { self.gridKey(event, grid); });
      this.examplesBar = examples || null;
      this.headGrid = grid;
    }
    this.caption = el("p", {"class": "attention-explorer-caption"}, live);
    this.figure = el("div", {"class": "attention-explorer-figure"}, live);
    this.readout = el("p", {"class": "attention-explorer-readout", "aria-live": "polite"}, live);
    this.draw();
  };

  // "“it” attends to cat 0.52 · mat 0.21 · the 0.10": query i's three largest weights.
  Explorer.prototype.attendsTo = function (i) {
    var example = this.example(), row = this.shown[i];
    var order = row.map(function (_, j) { return j; }).sort(function (a, b) { return row[b] - row[a]; });
    return "“" + example.queries[i] + "” attends to " + order.slice(0, 3).map(function (j) {
      return example.keys[j] + " " + formatWeight(row[j]);
    }).join(" · ");
  };

  Explorer.prototype.draw = function () {
    var self = this, d = this.data, s = this.state, example = this.example(), w = this.weights();
    this.shown = w;
    this.root.querySelectorAll("button[data-example]").forEach(function (b) {
      b.setAttribute("aria-pressed", String(+b.getAttribute("data-example") === s.example));
    });
    this.root.querySelectorAll("button[data-head]").forEach(function (b) {
      var on = +b.getAttribute("data-layer") === s.layer && +b.getAttribute("data-head") === s.head;
      b.setAttribute("aria-pressed", String(on));
    });
    this.settleTabStop(this.examplesBar);
    this.settleTabStop(this.headGrid);
    this.caption.textContent = d.toy
      ? (s.scale ? "scaled by 1/√d_k" : "not scaled") + (s.causal ? ", causal mask" : ", no mask")
      : (d.examples.length > 1 ? example.name + ": " : "") + d.layers[s.layer] + ", " + d.heads[s.head];

    // The map is a list box of query rows: one row is in the Tab order, the arrow keys move between them.
    var left = PAD + CHAR * Math.max.apply(null, example.queries.map(function (t) { return t.length; }));
    var top = PAD + CHAR * Math.max.apply(null, example.keys.map(function (t) { return t.length; }));
    var width = left + CELL * example.keys.length + PAD, height = top + CELL * example.queries.length + PAD;
    var svg = el("svg", {"class": "attention-explorer-map", width: width, height: height, role: "listbox",
                         "aria-label": this.caption.textContent + ": query rows (arrow keys move, Enter keeps one)"},
                 null, true);
    example.keys.forEach(function (token, j) {
      var x = left + CELL * (j + 0.5);
      el("text", {x: x, y: top - 4, transform: "rotate(-90 " + x + " " + (top - 4) + ")", "aria-hidden": "true",
                  "dominant-baseline": "middle", "class": "key"}, svg, true).textContent = token;
    });
    this.rows = example.queries.map(function (token, i) {
      var row = el("g", {"class": "query-row", "data-row": i, role: "option", tabindex: -1,
                         "aria-selected": String(i === s.row), "aria-label": self.attendsTo(i)}, svg, true);
      el("text", {x: left - 4, y: top + CELL * (i + 0.5), "text-anchor": "end", "dominant-baseline": "middle",
                  "class": "query", "data-row": i}, row, true).textContent = token;
      w[i].forEach(function (value, j) {
        var cell = el("rect", {x: left + CELL * j, y: top + CELL * i, width: CELL, height: CELL,
                               fill: colour(d.colours, value), "class": "cell", "data-row": i, "data-col": j,
                               "data-weight": String(value)}, row, true);
        el("title", {}, cell, true).textContent = token + " → " + example.keys[j] + ": " + formatWeight(value);
      });
      row.addEventListener("mouseenter", function () { self.show(i); });
      row.addEventListener("focus", function () { self.focusRow(i); });
      row.addEventListener("blur", function () { self.show(s.row); });
      row.addEventListener("click", function () { self.keep(i); });
      row.addEventListener("keydown", function (event) { self.key(event, i); });
      return row;
    });
    // Two outlines, black under white, show the row on any colour of the map (drawn at row 0, moved down).
    this.highlight = el("g", {"class": "row-highlight", "pointer-events": "none", "aria-hidden": "true"}, svg, true);
    [["#000", 4], ["#fff", 2]].forEach(function (stroke) {
      el("rect", {x: left, y: top, width: CELL * example.keys.length, height: CELL, fill: "none",
                  stroke: stroke[0], "stroke-width": stroke[1]}, self.highlight, true);
    });
    svg.addEventListener("mouseleave", function () {
      var focused = self.rows.indexOf(document.activeElement);
      self.show(focused >= 0 ? focused : s.row);
    });
    // The map and its colour bar are one picture, so that both shrink together on a narrow screen.
    var bar = colourBar(d.colours, d.bar_label, width, top, CELL * example.queries.length);
    var pictureWidth = width + +bar.getAttribute("width"), pictureHeight = Math.max(height, +bar.getAttribute("height"));
    var picture = el("svg", {"class": "attention-explorer-picture", width: pictureWidth, height: pictureHeight,
                             viewBox: "0 0 " + pictureWidth + " " + pictureHeight}, null, true);
    picture.appendChild(svg);
    picture.appendChild(bar);
    this.figure.innerHTML = "";
    this.figure.appendChild(picture);
    this.rows[s.row === null ? 0 : s.row].setAttribute("tabindex", "0");
    this.show(s.row);
  };

  // Roving focus: `button` becomes its group's one Tab stop.
  Explorer.prototype.rove = function (group, button) {
    group.querySelectorAll("button").forEach(function (b) { b.setAttribute("tabindex", b === button ? "0" : "-1"); });
  };

  // The group's Tab stop is the button shown (aria-pressed), unless the reader has moved since.
  Explorer.prototype.settleTabStop = function (group) {
    if (!group || group.contains(document.activeElement)) return;
    var pressed = group.querySelector("button[aria-pressed='true']") || group.querySelector("button");
    this.rove(group, pressed);
  };

  Explorer.prototype.moveTo = function (group, button, event) {
    event.preventDefault();
    if (!button) return;
    this.rove(group, button);
    button.focus();
  };

  // The examples' toolbar: Left/Up and Right/Down move (round the ends), Home and End jump.
  Explorer.prototype.toolbarKey = function (event, toolbar) {
    var buttons = Array.prototype.slice.call(toolbar.querySelectorAll("button"));
    var i = buttons.indexOf(document.activeElement), n = buttons.length;
    if (i < 0) return;
    var to = {ArrowRight: (i + 1) % n, ArrowDown: (i + 1) % n, ArrowLeft: (i + n - 1) % n,
              ArrowUp: (i + n - 1) % n, Home: 0, End: n - 1}[event.key];
    if (to !== undefined) this.moveTo(toolbar, buttons[to], event);
  };

  // The heads' grid: the arrow keys move by one head or layer (stopping at the edges), Home and
  // End go to the first and last head of the layer, Ctrl+Home and Ctrl+End to the first and last
  // head of all (WAI-ARIA's data grid).
  Explorer.prototype.gridKey = function (event, grid) {
    var active = document.activeElement;
    if (!active || !grid.contains(active) || !active.hasAttribute("data-head")) return;
    var l = +active.getAttribute("data-layer"), h = +active.getAttribute("data-head");
    var lastLayer = this.data.layers.length - 1, lastHead = this.data.heads.length - 1;
    var control = event.ctrlKey || event.metaKey;
    var to = {ArrowRight: [l, Math.min(h + 1, lastHead)], ArrowLeft: [l, Math.max(h - 1, 0)],
              ArrowDown: [Math.min(l + 1, lastLayer), h], ArrowUp: [Math.max(l - 1, 0), h],
              Home: [control ? 0 : l, 0], End: [control ? lastLayer : l, lastHead],
              PageDown: [lastLayer, h], PageUp: [0, h]}[event.key];
    if (to === undefined) return;
    this.moveTo(grid, grid.querySelector("button[data-layer='" + to[0] + "'][data-head='" + to[1] + "']"), event);
  };

  Explorer.prototype.focusRow = function (i) {
    this.rows.forEach(function (row, r) { row.setAttribute("tabindex", r === i ? "0" : "-1"); });
    this.show(i);
  };

  Explorer.prototype.key = function (event, i) {
    var last = this.rows.length - 1;
    var to = {ArrowDown: Math.min(i + 1, last), ArrowUp: Math.max(i - 1, 0), Home: 0, End: last}[event.key];
    if (to !== undefined) {
      this.rows[to].focus();
    } else if (event.key === "Enter" || event.key === " ") {
      this.keep(i);
    } else {
      return;
    }
    event.preventDefault();
  };

  // Enter, Space or a click keeps row i highlighted (while the reader switches heads); again lets it go.
  Explorer.prototype.keep = function (i) {
    var s = this.state;
    s.row = s.row === i ? null : i;
    this.rows.forEach(function (row, r) { row.setAttribute("aria-selected", String(r === s.row)); });
    this.show(i);
  };

  // Query row i (or none) is highlighted, and the readout says where it attends.
  Explorer.prototype.show = function (i) {
    this.rows.forEach(function (row, r) { row.classList.toggle("shown", r === i); });
    if (i === null || i === undefined) {
      this.highlight.setAttribute("display", "none");
      this.highlight.removeAttribute("data-row");
      this.readout.textContent = this.data.hint;
      this.readout.removeAttribute("data-row");
      return;
    }
    this.highlight.removeAttribute("display");
    this.highlight.setAttribute("data-row", i);
    this.highlight.setAttribute("transform", "translate(0 " + CELL * i + ")");
    this.readout.textContent = this.attendsTo(i);
    this.readout.setAttribute("data-row", i);
  };

  window.attentionExplorer = window.attentionExplorer || {
    setUp: function () {
      document.querySelectorAll(".attention-explorer:not([data-ready])").forEach(function (root) {
        try { new Explorer(root); } catch (error) { root.setAttribute("data-error", String(error)); throw error; }
      });
    },
    toyWeights: toyWeights
  };
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", window.attentionExplorer.setUp);
  } else {
    window.attentionExplorer.setUp();
  }
})();
