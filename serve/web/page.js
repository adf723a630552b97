"use strict";
(function () {
  var KEY_STORE = "purr.apiKey";
  var form = document.getElementById("form");
  var textEl = document.getElementById("text");
  var contextEl = document.getElementById("context");
  var keyEl = document.getElementById("api-key");
  var button = document.getElementById("submit");
  var errorEl = document.getElementById("error");
  var resultEl = document.getElementById("result");
  var countEl = document.getElementById("count");
  var busy = false;

  // -- the API key, remembered in localStorage (when the browser allows it) ----------------
  try {
    var saved = window.localStorage.getItem(KEY_STORE);
    if (saved) {
      keyEl.value = saved;
      keyEl.closest("details").open = true;
    }
  } catch (e) { /* storage disabled: the key is simply not remembered */ }
  keyEl.addEventListener("input", function () {
    try {
      var v = keyEl.value.trim();
      if (v) window.localStorage.setItem(KEY_STORE, v);
      else window.localStorage.removeItem(KEY_STORE);
    } catch (e) { /* ignore */ }
  });

  function updateCount() {
    var n = textEl.value.length;
    countEl.textContent = n ? n.toLocaleString() + " characters" : "";
  }
  textEl.addEventListener("input", updateCount);
  updateCount();

  // -- small DOM helpers: every piece of response data goes through textContent -------------
  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        if (k === "text") node.textContent = attrs[k];
        else if (k === "className") node.className = attrs[k];
        else node.setAttribute(k, attrs[k]);
      });
    }
    (children || []).forEach(function (c) {
      if (c === null || c === undefined) return;
      node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return node;
  }
  function fmt(x, digits) {
    return typeof x === "number" && isFinite(x) ? x.toFixed(digits === undefined ? 2 : digits) : "–";
  }
  function safeUrl(url) {
    if (typeof url !== "string" || !url) return null;
    try {
      var u = new URL(url, window.location.href);
      return u.protocol === "http:" || u.protocol === "https:" ? u.href : null;
    } catch (e) {
      return null;
    }
  }

  // -- word-level diff: LCS over tokens (words, runs of whitespace, single punctuation) -----
  var TOKEN = /\s+|[\p{L}\p{N}_]+|[^\s\p{L}\p{N}_]/gu;
  function tokens(s) { return s.match(TOKEN) || []; }
  function isSpace(t) { return /^\s+$/.test(t); }

  function diffTokens(a, b) {
    var ops = [];
    var pre = 0;
    while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
    var suf = 0;
    while (suf < a.length - pre && suf < b.length - pre &&
           a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
    var i;
    for (i = 0; i < pre; i++) ops.push(["eq", a[i]]);
    var A = a.slice(pre, a.length - suf), B = b.slice(pre, b.length - suf);
    var n = A.length, m = B.length;
    if (n * m > 4000000) {
      // too large for a quadratic table: show the changed middle as one replacement
      A.forEach(function (t) { ops.push(["del", t]); });
      B.forEach(function (t) { ops.push(["ins", t]); });
    } else {
      var w = m + 1;
      var L = new Uint32Array((n + 1) * w);
      for (var x = n - 1; x >= 0; x--) {
        for (var y = m - 1; y >= 0; y--) {
          L[x * w + y] = A[x] === B[y] ? L[(x + 1) * w + y + 1] + 1
            : Math.max(L[(x + 1) * w + y], L[x * w + y + 1]);
        }
      }
      var p = 0, q = 0;
      while (p < n && q < m) {
        if (A[p] === B[q]) { ops.push(["eq", A[p]]); p++; q++; }
        else if (L[(p + 1) * w + q] >= L[p * w + q + 1]) { ops.push(["del", A[p]]); p++; }
        else { ops.push(["ins", B[q]]); q++; }
      }
      for (; p < n; p++) ops.push(["del", A[p]]);
      for (; q < m; q++) ops.push(["ins", B[q]]);
    }
    for (i = a.length - suf; i < a.length; i++) ops.push(["eq", a[i]]);
    // a space kept between two changes joins them: "Thomas Edison" -> "Gustave Eiffel"
    for (i = 1; i < ops.length - 1; i++) {
      if (ops[i][0] === "eq" && isSpace(ops[i][1]) && ops[i - 1][0] !== "eq" && ops[i + 1][0] !== "eq") {
        ops.splice(i, 1, ["del", ops[i][1]], ["ins", ops[i][1]]);
        i++;
      }
    }
    return ops;
  }

  function renderDiff(container, before, after) {
    var ops = diffTokens(tokens(before), tokens(after));
    var i = 0;
    while (i < ops.length) {
      if (ops[i][0] === "eq") {
        var same = "";
        while (i < ops.length && ops[i][0] === "eq") same += ops[i++][1];
        container.appendChild(document.createTextNode(same));
      } else {
        var del = "", ins = "";
        while (i < ops.length && ops[i][0] !== "eq") {
          if (ops[i][0] === "del") del += ops[i][1]; else ins += ops[i][1];
          i++;
        }
        if (del) container.appendChild(el("del", { text: del }));
        if (ins) container.appendChild(el("ins", { text: ins }));
      }
    }
  }

  // -- the revised passage: sentences coloured by attribution, with citations ---------------
  function band(s) {
    if (!s.applicable || typeof s.attribution !== "number") return "na";
    if (s.attribution >= 0.7) return "high";
    if (s.attribution >= 0.4) return "mid";
    return "low";
  }

  function renderRevised(container, revised, report) {
    if (!report || !Array.isArray(report.sentences)) {
      container.appendChild(document.createTextNode(revised));
      return;
    }
    var ids = report.evidence_ids || [];
    var pos = 0;
    report.sentences.forEach(function (s) {
      if (!s || typeof s.text !== "string" || !s.text) return;
      var at = revised.indexOf(s.text, pos);
      if (at < 0) return; // not found verbatim: its text stays plain
      if (at > pos) container.appendChild(document.createTextNode(revised.slice(pos, at)));
      var kind = band(s);
      var title = kind === "na"
        ? "not checked (no claim to attribute)"
        : "attribution " + fmt(s.attribution);
      container.appendChild(el("span", { className: "sentence " + kind, title: title, text: s.text }));
      var n = s.evidence_id == null ? -1 : ids.indexOf(s.evidence_id);
      if (n >= 0 && typeof s.attribution === "number" && s.attribution >= 0.5) {
        container.appendChild(el("a", {
          className: "cite",
          href: "#ev-" + (n + 1),
          title: "evidence " + (n + 1),
          text: "[" + (n + 1) + "]",
        }));
      }
      pos = at + s.text.length;
    });
    if (pos < revised.length) container.appendChild(document.createTextNode(revised.slice(pos)));
  }

  function renderEvidence(container, data) {
    var ids = (data.report && data.report.evidence_ids) || [];
    var byId = {};
    (data.evidence || []).forEach(function (e) { if (e && e.id != null) byId[e.id] = e; });
    ids.forEach(function (id, k) {
      var e = byId[id] || { id: id, title: id, text: "" };
      var n = k + 1;
      var card = el("div", { className: "card", id: "ev-" + n });
      card.appendChild(el("h3", null, [el("span", { className: "n", text: "[" + n + "]" }),
                                       String(e.title || e.id)]));
      if (e.text) card.appendChild(el("p", { text: e.text }));
      var url = safeUrl(e.url);
      var meta = el("div", { className: "meta" });
      if (url) meta.appendChild(el("a", { href: url, rel: "noopener noreferrer", target: "_blank", text: e.url }));
      else if (e.source) meta.appendChild(document.createTextNode(String(e.source)));
      if (meta.childNodes.length) card.appendChild(meta);
      container.appendChild(card);
    });
    if (!ids.length) container.appendChild(el("p", { className: "muted", text: "No evidence was cited." }));
  }

  function renderSteps(container, steps) {
    var list = el("ol", { className: "steps" });
    steps.forEach(function (s) {
      var verdict = s.accepted ? "edited" : (s.agrees === true ? "agrees" : s.agrees === false ? "disagrees" : "skipped");
      var li = el("li", null, [el("strong", { text: verdict }), ": ", String(s.query || ""),
                               el("span", { className: "muted", text: " (" + (s.reason || "") + ")" })]);
      list.appendChild(li);
    });
    container.appendChild(list);
  }

  function render(data) {
    var r = resultEl;
    r.replaceChildren();
    var status = String(data.status || "unknown");
    var summary = el("div", { className: "summary" }, [
      el("span", { id: "status", className: "badge " + status, text: status }),
    ]);
    var total = 0;
    Object.keys(data.timings_ms || {}).forEach(function (k) {
      var v = data.timings_ms[k];
      if (typeof v === "number") total += v;
    });
    var rep = data.report;
    var scores = rep
      ? "Attribution " + fmt(rep.attribution_before) + " → " + fmt(rep.attribution_after) +
        " · Preservation " + fmt(rep.preservation) + " · F1_AP " + fmt(rep.f1_ap) +
        " · " + (total / 1000).toFixed(1) + " s"
      : "No report · " + (total / 1000).toFixed(1) + " s";
    summary.appendChild(el("span", { id: "scores", text: scores }));
    r.appendChild(summary);

    var warnings = el("ul", { id: "warnings", className: "warnings" });
    (data.warnings || []).forEach(function (w) { warnings.appendChild(el("li", { text: String(w) })); });
    if (warnings.childNodes.length) r.appendChild(warnings);

    r.appendChild(el("h2", { text: "Changes" }));
    var diff = el("div", { id: "diff", className: "text-box" });
    if (data.original === data.revised) {
      diff.appendChild(el("span", { className: "muted", text: "No changes." }));
    } else {
      renderDiff(diff, String(data.original || ""), String(data.revised || ""));
    }
    r.appendChild(diff);

    r.appendChild(el("h2", { text: "Revised passage" }));
    var revised = el("div", { id: "revised", className: "text-box" });
    renderRevised(revised, String(data.revised || ""), rep);
    r.appendChild(revised);
    r.appendChild(el("div", { className: "legend", "aria-hidden": "true" }, [
      el("span", { className: "sentence high", text: "attributed ≥ 0.7" }),
      el("span", { className: "sentence mid", text: "0.4–0.7" }),
      el("span", { className: "sentence low", text: "< 0.4" }),
      el("span", { className: "sentence na", text: "no claim" }),
    ]));

    r.appendChild(el("h2", { text: "Evidence" }));
    var evidence = el("div", { id: "evidence", className: "cards" });
    renderEvidence(evidence, data);
    r.appendChild(evidence);

    var steps = data.steps || [];
    if (steps.length) {
      var details = el("details", null, [el("summary", { text: "Revision steps (" + steps.length + ")" })]);
      renderSteps(details, steps);
      r.appendChild(details);
    }
    r.hidden = false;
  }

  // -- submit --------------------------------------------------------------------------------
  function showError(message) {
    errorEl.textContent = message;
    errorEl.hidden = false;
  }

  function setBusy(on) {
    busy = on;
    button.disabled = on;
    button.textContent = on ? "Checking…" : "Check and revise";
    form.setAttribute("aria-busy", on ? "true" : "false");
  }

  async function submit() {
    if (busy) return;
    errorEl.hidden = true;
    errorEl.textContent = "";
    var body = { text: textEl.value };
    if (contextEl.value.trim()) body.context = contextEl.value;
    var headers = { "Content-Type": "application/json", "Accept": "application/json" };
    var key = keyEl.value.trim();
    if (key) headers["Authorization"] = "Bearer " + key;
    setBusy(true);
    try {
      var resp;
      try {
        resp = await fetch("/v1/edit", { method: "POST", headers: headers, body: JSON.stringify(body) });
      } catch (e) {
        throw new Error("Could not reach the server (" + e.message + "); is it running?");
      }
      var data = null;
      try { data = await resp.json(); } catch (e) { /* not JSON */ }
      if (!resp.ok) {
        var msg = data && data.error && data.error.message;
        throw new Error(msg ? String(msg) : "The server answered " + resp.status + " " + resp.statusText);
      }
      if (!data || typeof data !== "object" || typeof data.revised !== "string") {
        throw new Error("The server's answer was not a result (HTTP " + resp.status + ").");
      }
      render(data);
    } catch (e) {
      resultEl.hidden = true;
      resultEl.replaceChildren();
      showError(e.message || String(e));
    } finally {
      setBusy(false);
    }
  }

  form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    submit();
  });
  form.addEventListener("keydown", function (ev) {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) {
      ev.preventDefault();
      submit();
    }
  });
})();
