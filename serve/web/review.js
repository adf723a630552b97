"use strict";
// The reviewer's view of a result: the answer with the words the judge names marked by kind,
// each mark opening its finding (the evidence sentence that decides it, highlighted in its
// document, and the fix with Accept and Reject). Sure fixes start accepted (purr applied them),
// unsure ones wait for the reviewer. A finding's fix replaces exactly answer[start:end], so the
// answer is the original with the accepted fixes put in. Keys: n / p next and previous finding,
// a accept, r reject.
(function () {
  var purr = (window.purr = window.purr || {});
  var el = function () { return purr.el.apply(null, arguments); };
  var KIND = { contradicted: "contradicted", not_supported: "not stated" };
  var HOW = { safe: "sure fix", unsafe: "unsure: suggested fix", display: "named, no fix" };
  var view = null;

  function sentences(text) {
    var out = [], re = /[^.!?\n]+(?:[.!?]+["')\]]*|\n|$)\s*/g, m;
    while ((m = re.exec(text)) && m[0]) out.push([m.index, m.index + m[0].trimEnd().length]);
    return out.length ? out : [[0, text.length]];
  }
  function words(s) { return (s.toLowerCase().match(/[\p{L}\p{N}]+/gu) || []); }

  // the evidence sentence that decides a finding: the one stating its fix, else the one that
  // shares the most words with the answer's sentence around the named words
  function deciding(evidence, f, answer) {
    var spans = sentences(evidence);
    if (f.fix) {
      var at = evidence.toLowerCase().indexOf(f.fix.toLowerCase());
      for (var i = 0; at >= 0 && i < spans.length; i++) if (spans[i][0] <= at && at < spans[i][1]) return spans[i];
    }
    var around = sentences(answer).filter(function (s) { return s[0] <= f.start && f.start < s[1]; })[0];
    var claim = new Set(words(around ? answer.slice(around[0], around[1]) : f.text));
    var best = spans[0], score = -1;
    spans.forEach(function (s) {
      var n = words(evidence.slice(s[0], s[1])).filter(function (w) { return claim.has(w); }).length;
      if (n > score) { best = s; score = n; }
    });
    return best;
  }

  function current() {
    // untouched by the reviewer, the answer is purr's revision (whatever its findings name)
    if (!view.touched) return view.data.revised;
    var text = view.data.original, before = Infinity;
    view.findings.slice().sort(function (x, y) { return y.start - x.start; }).forEach(function (f) {
      // two findings over the same words: the later (by position) one alone is put in
      if (view.state[f.i] !== "accepted" || f.fix == null || f.end > before) return;
      text = text.slice(0, f.start) + f.fix + text.slice(f.end);
      before = f.start;
    });
    return text;
  }

  function renderMarked() {
    var box = view.marked, text = view.data.original, pos = 0;
    box.replaceChildren();
    view.findings.forEach(function (f) {
      if (f.start < pos) return; // overlaps an earlier mark: listed, not marked
      box.appendChild(document.createTextNode(text.slice(pos, f.start)));
      var state = view.state[f.i];
      var shown = state === "accepted" ? f.fix : f.text;
      var mark = el("mark", {
        id: "mark-" + f.i, className: "finding " + f.kind + " " + state, tabindex: "0",
        role: "button", "aria-controls": "finding-" + f.i,
        title: KIND[f.kind] + (state === "accepted" ? " (fixed; was \u201c" + f.text + "\u201d)" : ""),
        text: shown,
      });
      mark.setAttribute("aria-label", KIND[f.kind] + ": " + shown + ", " + state + "; open the finding");
      mark.addEventListener("click", function () { open(f.i); });
      mark.addEventListener("keydown", function (ev) {
        if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); open(f.i); }
      });
      box.appendChild(mark);
      var tag = KIND[f.kind] + (state === "accepted" ? ", fixed" : state === "rejected" ? ", kept" : "");
      box.appendChild(el("span", { className: "kind-tag " + f.kind, text: tag }));
      pos = f.end;
    });
    box.appendChild(document.createTextNode(text.slice(pos)));
  }

  function renderFinding(f) {
    var state = view.state[f.i];
    var item = document.getElementById("finding-" + f.i);
    var fresh = !item;
    if (fresh) {
      item = el("details", { id: "finding-" + f.i, className: "finding-item " + f.kind });
      item.appendChild(el("summary"));
      item.appendChild(el("div", { className: "body" }));
      item.addEventListener("toggle", function () { if (item.open) view.at = f.i; });
      view.list.appendChild(item);
    }
    item.className = "finding-item " + f.kind + " " + state;
    var summary = item.querySelector("summary");
    summary.replaceChildren(
      el("strong", { text: KIND[f.kind] }), " ", el("q", { text: f.text }),
      f.fix ? " \u2192 " : "", f.fix ? el("q", { className: "fix", text: f.fix }) : null,
      " ", el("span", { className: "how", text: HOW[f.applicability] || f.applicability }),
      " ", el("span", { className: "state", text: state }));
    if (!fresh) return;
    var body = item.querySelector(".body");
    var ev = view.evidence[f.evidence_id];
    if (ev && ev.text) {
      var span = deciding(ev.text, f, view.data.original);
      var given = /^given-(\d+)$/.exec(String(ev.id));
      var title = ev.title || (given ? "Document " + (Number(given[1]) + 1) : ev.id);
      body.appendChild(el("p", { className: "from", text: "Evidence: " + title }));
      body.appendChild(el("blockquote", { className: "evidence-doc" }, [
        ev.text.slice(0, span[0]),
        el("mark", { className: "evidence-sentence", text: ev.text.slice(span[0], span[1]) }),
        ev.text.slice(span[1])]));
    }
    body.appendChild(el("p", { className: "reason muted", text: f.reason }));
    if (f.fix != null) {
      var accept = el("button", { type: "button", id: "accept-" + f.i, className: "accept", text: "Accept" });
      var reject = el("button", { type: "button", id: "reject-" + f.i, className: "reject secondary", text: "Reject" });
      accept.setAttribute("aria-label", "Accept: " + f.text + " \u2192 " + f.fix);
      reject.setAttribute("aria-label", "Reject: keep " + f.text);
      accept.addEventListener("click", function () { decide(f.i, "accepted"); });
      reject.addEventListener("click", function () { decide(f.i, "rejected"); });
      body.appendChild(el("div", { className: "row" }, [accept, reject]));
    }
  }

  function update() {
    renderMarked();
    view.findings.forEach(renderFinding);
    var now = current();
    view.onChange(now);
    var pending = view.findings.filter(function (f) { return view.state[f.i] === "pending"; }).length;
    view.summary.textContent = view.findings.length + " finding" + (view.findings.length === 1 ? "" : "s") +
      (pending ? ", " + pending + " waiting for you" : "");
  }

  function decide(i, state) {
    if (view.state[i] === "noted") return;
    view.state[i] = state;
    view.touched = true;
    update();
    var item = document.getElementById("finding-" + i);
    if (item) item.querySelector("summary").focus();
  }

  function open(i) {
    view.findings.forEach(function (f) {
      var d = document.getElementById("finding-" + f.i);
      if (d) d.open = f.i === i;
    });
    var item = document.getElementById("finding-" + i);
    view.at = i;
    if (item) {
      item.scrollIntoView({ block: "nearest" });
      item.querySelector("summary").focus();
    }
  }

  function step(by) {
    var order = view.findings.map(function (f) { return f.i; });
    if (!order.length) return;
    var k = order.indexOf(view.at);
    open(order[k < 0 ? (by > 0 ? 0 : order.length - 1) : (k + by + order.length) % order.length]);
  }

  document.addEventListener("keydown", function (ev) {
    if (!view || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    var t = ev.target;
    if (t && (t.tagName === "TEXTAREA" || t.tagName === "INPUT")) return;
    if (ev.key === "n") step(1);
    else if (ev.key === "p") step(-1);
    else if ((ev.key === "a" || ev.key === "r") && view.at != null) decide(view.at, ev.key === "a" ? "accepted" : "rejected");
    else return;
    ev.preventDefault();
  });

  // data: the result contract; parts: {marked, list, summary, acceptSure}; onChange(text)
  purr.review = function (data, parts, onChange) {
    var findings = (data.findings || []).map(function (f, i) {
      return Object.assign({ i: i }, f);
    }).filter(function (f) {
      return typeof f.start === "number" && typeof f.end === "number" && f.start < f.end &&
        data.original.slice(f.start, f.end) === f.text;
    }).sort(function (x, y) { return x.start - y.start; });
    var evidence = {};
    (data.evidence || []).forEach(function (e) { if (e && e.id != null) evidence[e.id] = e; });
    var state = {};
    findings.forEach(function (f) {
      state[f.i] = f.fix == null ? "noted" : f.applicability === "safe" ? "accepted" : "pending";
    });
    parts.list.replaceChildren();
    view = { data: data, findings: findings, evidence: evidence, state: state, at: null,
             marked: parts.marked, list: parts.list, summary: parts.summary, onChange: onChange };
    parts.acceptSure.onclick = function () {
      findings.forEach(function (f) {
        if (f.applicability === "safe" && f.fix != null) state[f.i] = "accepted";
      });
      view.touched = true;
      update();
    };
    parts.acceptSure.disabled = !findings.some(function (f) { return f.applicability === "safe"; });
    update();
    return { current: current, decisions: function () {
      return findings.map(function (f) {
        return { start: f.start, end: f.end, text: f.text, fix: f.fix, kind: f.kind,
                 applicability: f.applicability, decision: state[f.i] };
      });
    } };
  };
})();
