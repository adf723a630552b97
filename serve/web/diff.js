"use strict";
// A word-level diff for the page: LCS over tokens (words, runs of whitespace, single
// punctuation), a space between two changes joining them. window.purr.renderDiff(box, a, b).
(function () {
  var purr = (window.purr = window.purr || {});
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
        if (del) container.appendChild(purr.el("del", { text: del }));
        if (ins) container.appendChild(purr.el("ins", { text: ins }));
      }
    }
  }

  purr.renderDiff = renderDiff;
})();
