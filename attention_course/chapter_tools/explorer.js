// The attention explorer: draws the attention maps that attention_course.chapter_tools.explorer
// embedded in the page as JSON, and lets the reader pick the example, the layer and the
// head, hover a query to read where it attends, and (for the toy example) switch the
// 1/sqrt(d_k) scaling and the causal mask, recomputing the weights here in the page.
//
// Self-contained on purpose: no library, no request, so it works offline, from a file,
// in a saved page and in Jupyter. Every explorer on a page is set up once.
(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";
  var CELL = 24, CHAR = 7, PAD = 6;

  function el(name, attrs, parent, ns) {
    var node = ns ? document.createElementNS(SVG, name) : document.createElement(name);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (parent) parent.appendChild(node);
    return node;
  }

  // White to dark blue, linear in the weight (the same scale as the static picture).
  function colour(w) {
    var t = Math.max(0, Math.min(1, w));
    function mix(a, b) { return Math.round(a + (b - a) * t); }
    return "rgb(" + mix(255, 8) + "," + mix(255, 48) + "," + mix(255, 107) + ")";
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
    this.data = JSON.parse(root.querySelector("script.attention-explorer-data").textContent);
    this.state = {example: 0, layer: 0, head: 0, scale: true, causal: false};
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
        var label = el("label", {}, controls);
        var box = el("input", {type: "checkbox", "class": "attention-explorer-" + pair[0]}, label);
        box.checked = self.state[pair[0]];
        box.addEventListener("change", function () { self.state[pair[0]] = box.checked; self.draw(); });
        label.appendChild(document.createTextNode(" " + pair[1]));
      });
    } else {
      if (d.examples.length > 1) {
        var examples = el("div", {"class": "attention-explorer-examples"}, controls);
        d.examples.forEach(function (example, i) {
          var b = el("button", {type: "button", "data-example": i}, examples);
          b.textContent = example.name;
          b.addEventListener("click", function () { self.state.example = i; self.draw(); });
        });
      }
      var grid = el("table", {"class": "attention-explorer-heads"}, controls);
      d.layers.forEach(function (layerName, l) {
        var row = el("tr", {}, grid);
        el("th", {scope: "row"}, row).textContent = layerName;
        d.heads.forEach(function (headName, h) {
          var b = el("button", {type: "button", "data-layer": l, "data-head": h,
                                title: layerName + ", " + headName}, el("td", {}, row));
          b.textContent = String(h + 1);
          b.addEventListener("click", function () { self.state.layer = l; self.state.head = h; self.draw(); });
        });
      });
    }
    this.caption = el("p", {"class": "attention-explorer-caption"}, live);
    this.figure = el("div", {"class": "attention-explorer-figure"}, live);
    this.readout = el("p", {"class": "attention-explorer-readout"}, live);
    this.draw();
  };

  Explorer.prototype.draw = function () {
    var self = this, d = this.data, s = this.state, example = this.example(), w = this.weights();
    this.root.querySelectorAll("button[data-example]").forEach(function (b) {
      b.setAttribute("aria-pressed", String(+b.getAttribute("data-example") === s.example));
    });
    this.root.querySelectorAll("button[data-head]").forEach(function (b) {
      var on = +b.getAttribute("data-layer") === s.layer && +b.getAttribute("data-head") === s.head;
      b.setAttribute("aria-pressed", String(on));
    });
    this.caption.textContent = d.toy
      ? (s.scale ? "scaled by 1/√d_k" : "not scaled") + (s.causal ? ", causal mask" : ", no mask")
      : (d.examples.length > 1 ? example.name + ": " : "") + d.layers[s.layer] + ", " + d.heads[s.head];
    this.readout.textContent = d.hint;
    this.readout.removeAttribute("data-row");

    var left = PAD + CHAR * Math.max.apply(null, example.queries.map(function (t) { return t.length; }));
    var top = PAD + CHAR * Math.max.apply(null, example.keys.map(function (t) { return t.length; }));
    var width = left + CELL * example.keys.length + PAD, height = top + CELL * example.queries.length + PAD;
    var svg = el("svg", {width: width, height: height, viewBox: "0 0 " + width + " " + height,
                         role: "img", "aria-label": this.caption.textContent}, null, true);
    example.keys.forEach(function (token, j) {
      var x = left + CELL * (j + 0.5);
      el("text", {x: x, y: top - 4, transform: "rotate(-90 " + x + " " + (top - 4) + ")",
                  "dominant-baseline": "middle", "class": "key"}, svg, true).textContent = token;
    });
    example.queries.forEach(function (token, i) {
      var label = el("text", {x: left - 4, y: top + CELL * (i + 0.5), "text-anchor": "end",
                              "dominant-baseline": "middle", "class": "query", "data-row": i}, svg, true);
      label.textContent = token;
      label.addEventListener("mouseenter", function () { self.hover(i); });
      w[i].forEach(function (value, j) {
        var cell = el("rect", {x: left + CELL * j, y: top + CELL * i, width: CELL, height: CELL,
                               fill: colour(value), "class": "cell", "data-row": i, "data-col": j,
                               "data-weight": String(value)}, svg, true);
        el("title", {}, cell, true).textContent = token + " → " + example.keys[j] + ": " + formatWeight(value);
        cell.addEventListener("mouseenter", function () { self.hover(i); });
      });
    });
    svg.addEventListener("mouseleave", function () { self.hover(null); });
    this.figure.innerHTML = "";
    this.figure.appendChild(svg);
    this.svg = svg;
    this.shown = w;
  };

  // Hovering query i dims the other rows and lists the keys it attends to most.
  Explorer.prototype.hover = function (i) {
    var example = this.example();
    this.svg.querySelectorAll("rect.cell").forEach(function (r) {
      r.setAttribute("opacity", i === null || +r.getAttribute("data-row") === i ? "1" : "0.3");
    });
    if (i === null) {
      this.readout.textContent = this.data.hint;
      this.readout.removeAttribute("data-row");
      return;
    }
    var row = this.shown[i], order = row.map(function (_, j) { return j; })
      .sort(function (a, b) { return row[b] - row[a]; }).slice(0, 3);
    this.readout.textContent = "“" + example.queries[i] + "” attends to " + order.map(function (j) {
      return example.keys[j] + " " + formatWeight(row[j]);
    }).join(" · ");
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
