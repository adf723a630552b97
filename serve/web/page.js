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
  var questionEl = document.getElementById("question");
  var purr = (window.purr = window.purr || {});
  var busy = false;
  var lastData = null, reviewed = null;

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
  purr.el = el;
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

  // -- the revised passage: sentences coloured by attribution, with citations ---------------
  function band(s) {
    if (!s.applicable || typeof s.attribution !== "number") return "na";
    if (s.attribution >= 0.7) return "high";
    if (s.attribution >= 0.4) return "mid";
    return "low";
  }

  // the revision as pieces: plain text, and each report sentence found verbatim with its band
  // and citation number (n: the evidence it is attributed to, where attributed)
  function pieces(revised, report) {
    if (!report || !Array.isArray(report.sentences)) return [{ text: revised }];
    var ids = report.evidence_ids || [], out = [], pos = 0;
    report.sentences.forEach(function (s) {
      if (!s || typeof s.text !== "string" || !s.text) return;
      var at = revised.indexOf(s.text, pos);
      if (at < 0) return; // not found verbatim: its text stays plain
      if (at > pos) out.push({ text: revised.slice(pos, at) });
      var n = s.evidence_id == null ? -1 : ids.indexOf(s.evidence_id);
      var cited = n >= 0 && typeof s.attribution === "number" && s.attribution >= 0.5;
      out.push({ text: s.text, sentence: s, n: cited ? n + 1 : null });
      pos = at + s.text.length;
    });
    if (pos < revised.length) out.push({ text: revised.slice(pos) });
    return out;
  }
  purr.cited = function (revised, report) {
    return pieces(revised, report).map(function (p) { return p.n ? p.text + " [" + p.n + "]" : p.text; }).join("");
  };

  function renderRevised(container, revised, report) {
    container.replaceChildren();
    pieces(revised, report).forEach(function (p) {
      if (!p.sentence) { container.appendChild(document.createTextNode(p.text)); return; }
      var kind = band(p.sentence);
      var title = kind === "na" ? "not checked (no claim to attribute)" : "attribution " + fmt(p.sentence.attribution);
      container.appendChild(el("span", { className: "sentence " + kind, title: title, text: p.text }));
      if (p.n) container.appendChild(el("a", { className: "cite", href: "#ev-" + p.n, title: "evidence " + p.n, text: "[" + p.n + "]" }));
    });
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

    r.appendChild(el("h2", { text: "The answer, marked" }));
    r.appendChild(el("p", { id: "findings-summary", className: "muted" }));
    var marked = el("div", { id: "marked", className: "text-box" });
    r.appendChild(marked);
    var acceptSure = el("button", { type: "button", id: "accept-sure", text: "Accept all sure fixes" });
    r.appendChild(el("div", { className: "row tools" }, [acceptSure,
      el("button", { type: "button", id: "copy-revised", className: "secondary", text: "Copy revised answer" }),
      el("button", { type: "button", id: "copy-plain", className: "secondary", text: "Copy without citation markers" }),
      el("button", { type: "button", id: "copy-json", className: "secondary", text: "Copy report as JSON" }),
      el("span", { id: "copy-status", className: "muted", role: "status", "aria-live": "polite" })]));
    r.appendChild(el("p", { className: "hint", text: "Keys: n / p next and previous finding, a accept, r reject." }));
    var list = el("div", { id: "findings", className: "findings" });
    r.appendChild(list);

    r.appendChild(el("h2", { text: "Changes" }));
    var diff = el("div", { id: "diff", className: "text-box" });
    r.appendChild(diff);

    r.appendChild(el("h2", { text: "Revised passage" }));
    var revised = el("div", { id: "revised", className: "text-box" });
    r.appendChild(revised);
    var original = String(data.original || "");
    lastData = data;
    reviewed = purr.review(data, { marked: marked, list: list, summary: r.querySelector("#findings-summary"),
                                   acceptSure: acceptSure }, function (now) {
      diff.replaceChildren();
      if (now === original) diff.appendChild(el("span", { className: "muted", text: "No changes." }));
      else purr.renderDiff(diff, original, now);
      renderRevised(revised, now, rep);
    });
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

  // -- the API: a POST with the key, its error message thrown as it is ------------------------
  purr.post = async function (path, body) {
    var headers = { "Content-Type": "application/json", "Accept": "application/json" };
    var key = keyEl.value.trim();
    if (key) headers["Authorization"] = "Bearer " + key;
    var resp;
    try {
      resp = await fetch(path, { method: "POST", headers: headers, body: JSON.stringify(body) });
    } catch (e) {
      throw new Error("Could not reach the server (" + e.message + "); is it running?");
    }
    var data = null;
    try { data = await resp.json(); } catch (e) { /* not JSON */ }
    if (!resp.ok) {
      var msg = data && data.error && data.error.message;
      throw new Error(msg ? String(msg) : "The server answered " + resp.status + " " + resp.statusText);
    }
    return data;
  };

  // -- copy out: the revised answer (with or without citation markers), the report as JSON ----
  async function copy(text, what) {
    var status = document.getElementById("copy-status");
    try {
      await navigator.clipboard.writeText(text);
    } catch (e) {
      var area = el("textarea", { "aria-hidden": "true" });
      area.value = text;
      document.body.appendChild(area);
      area.select();
      var ok = document.execCommand("copy");
      area.remove();
      if (!ok) { status.textContent = "Could not copy: the browser refused the clipboard"; return; }
    }
    status.textContent = "Copied " + what + " (" + text.length.toLocaleString() + " characters)";
  }
  resultEl.addEventListener("click", function (ev) {
    if (!reviewed || !ev.target || !ev.target.id) return;
    var now = reviewed.current();
    if (ev.target.id === "copy-revised") copy(purr.cited(now, lastData.report), "the revised answer");
    else if (ev.target.id === "copy-plain") copy(now, "the answer without citation markers");
    else if (ev.target.id === "copy-json") {
      var report = Object.assign({}, lastData, { review: { answer: now, decisions: reviewed.decisions() } });
      copy(JSON.stringify(report, null, 2), "the report as JSON");
    }
  });

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
    // the question drives the reader: sent as the context (else the conversation, if any)
    if (questionEl.value.trim()) body.context = questionEl.value.trim();
    else if (contextEl.value.trim()) body.context = contextEl.value;
    var docs = purr.documents();
    var cites = (textEl.value.match(/\[(\d+)\]/g) || []).map(function (m) { return Number(m.slice(1, -1)); });
    if (docs.length && cites.length && cites.every(function (n) { return n >= 1 && n <= docs.length; })) {
      body.sources = docs.map(function (d, k) { return { id: String(k + 1), text: d.text, title: d.title }; });
    } else if (docs.length) {
      body.evidence = docs.map(function (d) { return d.text; });
    }
    setBusy(true);
    try {
      var data = await purr.post("/v1/edit", body);
      if (!data || typeof data !== "object" || typeof data.revised !== "string") {
        throw new Error("The server's answer was not a result.");
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
