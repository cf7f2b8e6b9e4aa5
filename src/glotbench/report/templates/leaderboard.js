"use strict";
// glotbench leaderboard. Every value from the data is rendered with textContent
// or setAttribute; no HTML string is ever parsed. No network access.
(function () {
  var DATA = JSON.parse(document.getElementById("glotbench-data").textContent);
  var state = {
    view: DATA.default_view || "overall", sortKey: null, sortDir: -1, search: "", filters: {},
    showAll: false
  };
  // rows drawn at first on long boards: drawing 5,000 rows (a canvas each) takes seconds
  var ROW_LIMIT = 500;
  var modelIndex = {};
  DATA.models.forEach(function (m, i) { modelIndex[m.name] = i; });
  var cellIndex = new Map();
  DATA.cells.forEach(function (c) {
    cellIndex.set(c[0] + "\u0000" + c[1] + "\u0000" + c[2], c);
  });
  var level = Math.round(DATA.confidence_level * 100);

  function el(tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }
  // decimals of scores: 3 on a 0–1 scale, 1 for percentages (set by glotbench)
  var DIGITS = DATA.score_digits || 1;
  var DIFF_DIGITS = DIGITS === 1 ? 2 : DIGITS;
  function fmt(x, digits) {
    if (x === null || x === undefined || !isFinite(x)) return "—";
    return Number(x).toFixed(digits === undefined ? DIGITS : digits);
  }
  function estimate(score, se) {
    if (score === null || score === undefined) return "—";
    return se === null || se === undefined ? fmt(score) : fmt(score) + " ± " + fmt(se);
  }
  function count(x) {
    return Math.round(x).toLocaleString("en-US");
  }
  function interval(ci) {
    if (!ci || ci[0] === null || ci[1] === null) return "—";
    return "[" + fmt(ci[0]) + ", " + fmt(ci[1]) + "]";
  }
  var RANK_HELP = "rank_best–rank_worst: the " + level + "% rank interval. rank_best = 1 + the number of " +
    "models significantly better, rank_worst = the number of ranked models − the number significantly " +
    "worse (significantly: the " + level + "% percentile interval of the paired difference excludes 0)";
  // statistical ties come from the analysis: row.rank.ties lists runs of the positions
  // (rank.at, the view's score order) of the models the row is tied with, flat:
  // [first, last, first, last, ...]; the page only looks them up, for whichever row is
  // above after sorting and filtering
  function tiedWith(row, other) {
    if (!row.rank || !other.rank || !row.rank.ties) return false;
    var at = other.rank.at, runs = row.rank.ties;
    for (var i = 0; i + 1 < runs.length; i += 2) {
      if (runs[i] <= at && at <= runs[i + 1]) return true;
    }
    return false;
  }
  function cell(model, task, language) {
    return cellIndex.get(modelIndex[model] + "\u0000" + task + "\u0000" + language);
  }

  // ---- views --------------------------------------------------------------
  function fillViewSelect() {
    var select = document.getElementById("view");
    var groups = { overall: "Overall", task: "Per task", group: "Language groups", language: "Per language" };
    var byKind = {};
    Object.keys(DATA.views).forEach(function (key) {
      var kind = DATA.views[key].kind;
      (byKind[kind] = byKind[kind] || []).push(key);
    });
    ["overall", "task", "group", "language"].forEach(function (kind) {
      if (!byKind[kind]) return;
      var parent = select;
      if (kind !== "overall") {
        parent = document.createElement("optgroup");
        parent.label = groups[kind];
        select.appendChild(parent);
      }
      byKind[kind].forEach(function (key) {
        var option = el("option", DATA.views[key].label);
        option.value = key;
        parent.appendChild(option);
      });
    });
    select.value = state.view;
    select.addEventListener("change", function () {
      state.view = select.value;
      state.sortKey = null;
      render();
    });
  }

  function subValue(view, row, column) {
    if (view.kind === "overall" || view.kind === "group") {
      var v = row.sub && row.sub[column];
      return v ? { score: v[0], se: v[1], ci: [v[2], v[3]] } : null;
    }
    var c = view.kind === "task" ? cell(row.model, view.task, column) : cell(row.model, column, view.language);
    return c ? { score: c[3], se: null, ci: [c[5], c[6]], sd: c[4] } : null;
  }

  // in words, what the interval of a sub-column cell counts (see "What the intervals contain")
  function subContains(view) {
    if (view.kind === "overall" || view.kind === "group") {
      return DATA.analysis && DATA.analysis.scheme === "languages-only" ?
        "the choice of languages only (one score per language)" :
        "seeds, test-set bootstrap and languages (the task's own view)";
    }
    return "the seeds and test-set bootstrap replicates of this one language";
  }

  function columns(view) {
    // every model of a ranked view has a rank block: their number is the view's rank count
    var nRanked = view.rows.filter(function (r) { return r.rank; }).length;
    var cols = [
      { key: "rank", label: "#", num: true, value: function (r) { return r.rank ? r.rank.mean : null; },
        help: RANK_HELP,
        render: function (td, r, above) {
          if (!r.rank) { td.textContent = "—"; td.classList.add("missing"); return; }
          td.textContent = r.rank.best === r.rank.worst ? String(r.rank.best) : r.rank.best + "–" + r.rank.worst;
          td.title = "rank_best–rank_worst, the " + level + "% rank interval; mean rank " + fmt(r.rank.mean, 2);
          if (above && tiedWith(r, above)) {
            var tie = el("span", " ≈", "tie");
            tie.title = "statistically tied with the row above (" + above.model + "): the " + level +
              "% percentile interval of their paired difference contains 0";
            td.appendChild(tie);
          }
        } },
      { key: "dist", label: "rank distribution", num: true, value: function (r) { return r.rank ? r.rank.mean : null; },
        render: function (td, r) {
          if (!r.rank) { td.textContent = "—"; td.classList.add("missing"); return; }
          td.appendChild(rankBar(r.rank, nRanked));
        } },
      { key: "model", label: "model", text: true, value: function (r) { return r.model; },
        render: function (td, r) { td.textContent = r.model; td.title = r.model; td.classList.add("model"); } }
    ];
    cols.push({ key: "score", label: view.score_label + (view.kind === "language" ? "" : " ± SE"), num: true,
      value: function (r) { return r.score; },
      render: function (td, r) { td.textContent = estimate(r.score, r.se); } });
    if (view.kind !== "language") {
      cols.push({ key: "ci", label: level + "% CI", num: true, value: function (r) { return r.ci[0]; },
        render: function (td, r) { td.textContent = interval(r.ci); } });
    }
    cols.push({ key: "n", label: view.kind === "task" ? "languages" : "tasks", num: true,
      value: function (r) { return view.kind === "task" ? r.n_languages : r.n_tasks; },
      render: function (td, r) { td.textContent = String(view.kind === "task" ? r.n_languages : r.n_tasks); } });
    view.sub_columns.forEach(function (column) {
      cols.push({ key: "sub:" + column, label: column, num: true,
        value: function (r) { var v = subValue(view, r, column); return v ? v.score : null; },
        render: function (td, r) {
          var v = subValue(view, r, column);
          if (!v) { td.textContent = "—"; td.classList.add("missing"); return; }
          td.textContent = estimate(v.score, v.se);
          if (v.ci[0] !== null) td.title = level + "% CI " + interval(v.ci) + "; it counts " + subContains(view);
          else td.title = "no replication: no interval";
        } });
    });
    if (DATA.speed && Object.keys(DATA.speed).length) {
      // ScandEval's speed benchmark: GPT-2 tokens per second, mean ± 95 % half-width
      cols.push({ key: "speed", label: "tokens/s", num: true,
        value: function (r) { var v = DATA.speed[r.model]; return v ? v[0] : null; },
        render: function (td, r) {
          var v = DATA.speed[r.model];
          if (!v || v[0] === null) { td.textContent = "—"; td.classList.add("missing"); return; }
          if (v[4]) {  // no per-token work: the figure would time call overhead
            td.textContent = "trivial";
            td.title = "no per-token work (above 10^8 GPT-2 tokens/s: the benchmark times " +
              "call overhead, not a model)";
            return;
          }
          td.textContent = count(v[0]) + (v[1] === null ? "" : " ± " + count(v[1]));
          td.title = "GPT-2 tokens per second on documents of ~100–1,000 tokens (ScandEval); " +
            "short documents (~12–125 tokens): " + (v[2] === null ? "—" : count(v[2]) +
            (v[3] === null ? "" : " ± " + count(v[3])));
        } });
    }
    DATA.metadata_keys.forEach(function (key) {
      cols.push({ key: "meta:" + key, label: key, text: true,
        value: function (r) { var v = meta(r.model, key); return v === null ? null : metaSortValue(v); },
        render: function (td, r) { var v = meta(r.model, key); td.textContent = v === null ? "—" : String(v); } });
    });
    return cols;
  }

  function meta(model, key) {
    var m = DATA.models[modelIndex[model]];
    var v = m && m.metadata ? m.metadata[key] : null;
    return v === undefined ? null : v;
  }
  var SIZE = /^\s*([0-9.]+)\s*([kKmMbBtT]?)\s*$/;
  function metaSortValue(v) {
    if (typeof v === "number") return v;
    var match = SIZE.exec(String(v));
    if (match) {
      var scale = { "": 1, k: 1e3, m: 1e6, b: 1e9, t: 1e12 }[match[2].toLowerCase()];
      return parseFloat(match[1]) * scale;
    }
    return String(v);
  }

  function rankBar(rank, nRanked) {
    var width = 100, height = 16;
    var canvas = document.createElement("canvas");
    canvas.width = width;
    canvas.height = height;
    canvas.className = "rankbar";
    var ctx = canvas.getContext("2d");
    var n = Math.max(nRanked, 1);
    var barWidth = Math.max(width / n, 1);
    var parts = [];
    ctx.fillStyle = "#2f6db5";
    // shares from rank dist_from on (null: no draw at that rank); dist_out: % of the draws
    // at better and worse ranks than this window (only for wide distributions)
    var out = rank.dist_out;
    if (out && rank.dist_from > 1) parts.push("ranks 1–" + (rank.dist_from - 1) + ": " + fmt(out[0], 1) + "%");
    rank.dist.forEach(function (share, k) {
      if (share === null) return;
      var r = rank.dist_from + k;
      var h = Math.max(1, (share / 100) * height);
      ctx.fillRect(((r - 1) / n) * width, height - h, barWidth, h);
      parts.push("rank " + r + ": " + fmt(share, 1) + "%");
    });
    if (out && rank.dist_from + rank.dist.length <= nRanked) {
      parts.push("ranks " + (rank.dist_from + rank.dist.length) + "–" + nRanked + ": " + fmt(out[1], 1) + "%");
    }
    canvas.title = parts.join(", ");
    canvas.setAttribute("role", "img");
    canvas.setAttribute("aria-label", "rank distribution: " + parts.join(", "));
    return canvas;
  }

  // ---- filters and search -------------------------------------------------
  function fillFilters() {
    var holder = document.getElementById("filters");
    DATA.metadata_keys.forEach(function (key, i) {
      var values = [];
      DATA.models.forEach(function (m) {
        var v = m.metadata[key];
        if (v !== null && v !== undefined && values.indexOf(String(v)) < 0) values.push(String(v));
      });
      values.sort();
      var label = el("label", key + " ");
      var select = el("select");
      select.id = "filter-" + i;
      select.setAttribute("data-key", key);
      var any = el("option", "(any)");
      any.value = "";
      select.appendChild(any);
      values.forEach(function (v) { var o = el("option", v); o.value = v; select.appendChild(o); });
      select.addEventListener("change", function () { state.filters[key] = select.value; render(); });
      label.appendChild(select);
      holder.appendChild(label);
    });
    var search = document.getElementById("search");
    search.addEventListener("input", function () { state.search = search.value.toLowerCase(); render(); });
  }

  function visible(row) {
    var keys = Object.keys(state.filters);
    for (var i = 0; i < keys.length; i++) {
      var wanted = state.filters[keys[i]];
      if (wanted && String(meta(row.model, keys[i])) !== wanted) return false;
    }
    if (!state.search) return true;
    var hay = row.model.toLowerCase();
    DATA.metadata_keys.forEach(function (key) { var v = meta(row.model, key); if (v !== null) hay += " " + String(v).toLowerCase(); });
    return hay.indexOf(state.search) >= 0;
  }

  // ---- table ----------------------------------------------------------------
  function compare(a, b, dir) {
    if (a === null || a === undefined) return b === null || b === undefined ? 0 : 1; // missing last
    if (b === null || b === undefined) return -1;
    if (typeof a === "number" && typeof b === "number") return dir * (a - b);
    return dir * String(a).localeCompare(String(b));
  }

  function render() {
    var view = DATA.views[state.view];
    var cols = columns(view);
    document.getElementById("view-title").textContent = view.label;
    var table = document.getElementById("board");
    var thead = table.tHead, tbody = table.tBodies[0];
    var headRow = document.createElement("tr");
    cols.forEach(function (col) {
      var th = el("th", col.label, col.text ? "text" : "");
      th.setAttribute("data-key", col.key);
      if (col.help) th.title = col.help;
      th.setAttribute("scope", "col");
      if (state.sortKey === col.key) th.setAttribute("aria-sort", state.sortDir > 0 ? "ascending" : "descending");
      th.addEventListener("click", function () {
        if (state.sortKey === col.key) state.sortDir = -state.sortDir;
        else { state.sortKey = col.key; state.sortDir = col.text || col.key === "rank" || col.key === "dist" ? 1 : -1; }
        render();
      });
      headRow.appendChild(th);
    });
    thead.replaceChildren(headRow);
    var rows = view.rows.filter(visible);
    var sortCol = null;
    cols.forEach(function (c) { if (c.key === state.sortKey) sortCol = c; });
    if (sortCol) {
      var keyed = rows.map(function (r, i) { return { r: r, v: sortCol.value(r), i: i }; });
      keyed.sort(function (a, b) { return compare(a.v, b.v, state.sortDir) || a.i - b.i; });
      rows = keyed.map(function (k) { return k.r; });
    }
    var fragment = document.createDocumentFragment();
    var marks = noteMarks(view);
    // long boards draw their first ROW_LIMIT rows (sorting and search still see every row);
    // "show all" draws the rest
    var shown = state.showAll ? rows.length : Math.min(rows.length, ROW_LIMIT);
    rows.slice(0, shown).forEach(function (row, i) {
      var tr = document.createElement("tr");
      tr.setAttribute("data-model", row.model);
      var above = i > 0 ? rows[i - 1] : null;
      if (above && tiedWith(row, above)) tr.setAttribute("data-tie-above", "true");
      cols.forEach(function (col) {
        var td = el("td", null, col.text ? "text" : "");
        col.render(td, row, above);
        if (col.key === "model" && marks[row.model]) {
          marks[row.model].forEach(function (k) {
            var link = el("a", String(k), "note-mark");
            link.href = "#note-" + k;
            link.title = "note " + k;
            var sup = el("sup");
            sup.appendChild(link);
            td.appendChild(sup);
          });
        }
        tr.appendChild(td);
      });
      fragment.appendChild(tr);
    });
    tbody.replaceChildren(fragment);
    var countText = rows.length + " of " + view.rows.length + " models";
    var more = document.getElementById("show-all");
    more.hidden = shown === rows.length;
    if (shown < rows.length) {
      countText += " (the first " + shown + " drawn)";
      more.textContent = "Show all " + rows.length + " rows";
    }
    document.getElementById("count").textContent = countText;
    var contains = document.getElementById("intervals");
    contains.replaceChildren();
    var intervals = DATA.intervals || {};
    Object.keys(intervals).forEach(function (k) { contains.appendChild(el("li", intervals[k])); });
    renderNotes(view);
  }

  // notes about particular rows carry a number; their rows link to them
  function rowNotes(view) {
    return (view.row_notes || []).map(function (n, i) { return { key: i + 1, note: n }; });
  }
  function noteMarks(view) {
    var marks = {};
    rowNotes(view).forEach(function (item) {
      item.note.models.forEach(function (m) { (marks[m] = marks[m] || []).push(item.key); });
    });
    return marks;
  }
  function renderNotes(view) {
    var notes = document.getElementById("notes");
    notes.replaceChildren();
    rowNotes(view).forEach(function (item) {
      var li = el("li", null, "row-note");
      li.id = "note-" + item.key;
      li.appendChild(el("sup", String(item.key)));
      li.appendChild(document.createTextNode(" " + item.note.text));
      if (item.note.table) li.appendChild(noteTable(item.note.table));
      notes.appendChild(li);
    });
    DATA.notes.concat(view.notes || []).forEach(function (n) { notes.appendChild(el("li", n)); });
    document.getElementById("notes-heading").hidden = !notes.children.length;
  }
  function noteTable(table) {
    var t = el("table", null, "note-table");
    var head = document.createElement("tr");
    table.columns.forEach(function (c, i) { head.appendChild(el("th", c, i === 0 ? "text" : "")); });
    t.appendChild(el("thead")).appendChild(head);
    var body = el("tbody");
    table.rows.forEach(function (r) {
      var tr = document.createElement("tr");
      r.forEach(function (v, i) { tr.appendChild(el("td", v, i === 0 ? "text" : "")); });
      body.appendChild(tr);
    });
    t.appendChild(body);
    return t;
  }

  // ---- pairwise -------------------------------------------------------------
  function fillPairSelects() {
    var a = document.getElementById("model-a"), b = document.getElementById("model-b");
    var order = DATA.views.overall.rows.map(function (r) { return r.model; });
    order.forEach(function (name) {
      var oa = el("option", name); oa.value = name; a.appendChild(oa);
      var ob = el("option", name); ob.value = name; b.appendChild(ob);
    });
    if (order.length > 1) b.value = order[1];
    a.addEventListener("change", renderPair);
    b.addEventListener("change", renderPair);
  }

  function pairNumber(v, digits) {
    if (v === "inf") return "∞";
    if (v === "-inf") return "−∞";
    return fmt(v, digits);
  }

  function pairScope() {
    var P = DATA.pairwise, scope = document.getElementById("pair-scope");
    if (!P) { scope.textContent = ""; return; }
    scope.textContent = (P.complete
      ? "Every pair of the " + P.n_ranked + " ranked models is on this page"
      : "This page holds every pair of the top " + P.models.length + " of the " + P.n_ranked +
        " ranked models (at most " + P.max_cells + " pair × cell comparisons keep the page small)") +
      "; draws: " + P.draws + ". " + P.notes.join(" ");
  }

  function renderPair() {
    var a = document.getElementById("model-a").value, b = document.getElementById("model-b").value;
    var table = document.getElementById("pair");
    var summary = document.getElementById("pair-summary");
    var P = DATA.pairwise;
    table.tBodies[0].replaceChildren();
    table.tHead.replaceChildren();
    if (!P) { summary.textContent = "Fewer than two models are ranked: there are no pairs to compare."; return; }
    if (a === b) { summary.textContent = "Pick two different models."; return; }
    var ia = P.models.indexOf(a), ib = P.models.indexOf(b);
    if (ia < 0 || ib < 0) {
      summary.replaceChildren(
        el("span", "This pair is not on the page (it holds the pairs of the top " + P.models.length +
          " models). Every pair's numbers, these included, come from "),
        el("code", P.command),
        el("span", " run on the same store with the --replicates and --metric this page was made with" +
          " (see the notes): look up " + a + " and " + b + " as model_a and model_b, in either order, in pairs.parquet."));
      return;
    }
    if (ia > ib) { var t = a; a = b; b = t; var ti = ia; ia = ib; ib = ti; }
    var pair = P.pairs[ia + "," + ib];
    var headers = ["task", "language", a, b, "difference", "SD", "effect size", "|effect| ≥ " + P.effect_threshold];
    var headRow = document.createElement("tr");
    headers.forEach(function (h, i) { headRow.appendChild(el("th", h, i < 2 ? "text" : "")); });
    table.tHead.replaceChildren(headRow);
    var fragment = document.createDocumentFragment();
    P.units.forEach(function (unit, k) {
      var ca = cell(a, unit[0], unit[1]), cb = cell(b, unit[0], unit[1]);
      var tr = document.createElement("tr");
      tr.setAttribute("data-unit", unit[0] + "/" + unit[1]);
      [unit[0], unit[1], fmt(ca ? ca[3] : null), fmt(cb ? cb[3] : null),
        pairNumber(pair.difference[k], DIFF_DIGITS),
        pair.sd ? pairNumber(pair.sd[k], DIFF_DIGITS) : "—",
        pair.effect ? pairNumber(pair.effect[k], 2) : "—"].forEach(function (text, i) {
        tr.appendChild(el("td", text, i < 2 ? "text" : ""));
      });
      var flagged = pair.flagged ? pair.flagged[k] : false;
      tr.appendChild(el("td", flagged ? "yes" : "", flagged ? "flag" : ""));
      fragment.appendChild(tr);
    });
    table.tBodies[0].replaceChildren(fragment);
    var o = pair.overall;
    summary.textContent = a + " − " + b + " (overall score, " + P.units.length + " task-language cells): difference " +
      pairNumber(o.difference, DIFF_DIGITS) + ", SD over paired draws " + pairNumber(o.sd, DIFF_DIGITS) +
      ", effect size " + pairNumber(o.effect, 2) + (o.flagged ? " (flagged)" : "") + ", " + level +
      "% interval [" + pairNumber(o.ci[0], DIFF_DIGITS) + ", " + pairNumber(o.ci[1], DIFF_DIGITS) + "]; " +
      (o.mdd === undefined || o.mdd === null ? "" : "minimum detectable difference at " +
        pairNumber(P.mdd_power * 100, 0) + "% power " + pairNumber(o.mdd, DIFF_DIGITS) +
        (o.detectable ? " (the gap is detectable)" : " (the gap is below it: not reliably detectable with this design)") + "; ") +
      a + " is ahead in " + pairNumber(o.share_a_better * 100, 1) + "% of the draws and has the higher mean in " +
      pair.n_a_better + " of the " + P.units.length + " cells" + (pair.sd ? "" : " (one score per cell: no per-cell SD)") + ".";
  }

  document.getElementById("title").textContent = DATA.title;
  document.getElementById("level").textContent = String(level);
  // footer: the settings every number on the page was computed with
  document.getElementById("settings").textContent = DATA.settings ? DATA.settings.description : "";
  document.getElementById("settings-command").textContent = DATA.pairwise ? DATA.pairwise.command : "";
  // footer: the reproductions page (glotbench reproduce), linked when it sits beside the page
  (function reproductions() {
    const link = DATA.reproductions, where = document.getElementById("reproductions");
    if (!link) return;
    where.append("Published numbers recomputed by glotbench: ");
    if (link.href) {
      const a = document.createElement("a");
      a.href = link.href;
      a.textContent = "the reproductions page";
      where.append(a);
    } else {
      const code = document.createElement("code");
      code.textContent = link.command;
      where.append(code, ", run in this page's folder, writes the reproductions page beside this one");
    }
    where.append(" (" + link.document + ").");
  })();
  fillViewSelect();
  fillFilters();
  document.getElementById("show-all").addEventListener("click", function () {
    state.showAll = true;
    render();
  });
  fillPairSelects();
  pairScope();
  render();
  renderPair();
  document.body.setAttribute("data-ready-ms", String(Math.round(performance.now())));
  document.body.setAttribute("data-ready", "true");
})();
