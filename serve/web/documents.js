"use strict";
// The documents an answer is checked against: pasted into boxes, or dropped / chosen as files
// (.txt and .md as they are, .html through POST /v1/extract: the text extraction web research
// uses). window.purr.documents() gives the non-empty ones; a file that cannot be a document
// (binary, too large, a page with no article) is refused with a message, the page stays usable.
(function () {
  var purr = (window.purr = window.purr || {});
  var MAX_FILE_BYTES = 1000000;
  var TEXT_TYPES = /\.(txt|md|markdown|text)$/i;
  var HTML_TYPES = /\.(html?|xhtml)$/i;
  var list = document.getElementById("documents");
  var addButton = document.getElementById("add-doc");
  var fileInput = document.getElementById("doc-files");
  var drop = document.getElementById("doc-drop");
  var note = document.getElementById("doc-note");
  var count = 0;

  function say(message, bad) {
    note.textContent = message;
    note.className = bad ? "doc-note bad" : "doc-note";
  }

  function renumber() {
    Array.prototype.forEach.call(list.querySelectorAll(".doc"), function (box, k) {
      var label = box.querySelector("label");
      var title = box.getAttribute("data-title");
      label.firstChild.textContent = "Document " + (k + 1) + (title ? " (" + title + ")" : "");
      box.querySelector("button.remove").setAttribute("aria-label", "Remove document " + (k + 1));
    });
  }

  function addDocument(text, title) {
    count += 1;
    var id = "doc-" + count;
    var box = document.createElement("div");
    box.className = "doc";
    if (title) box.setAttribute("data-title", title);
    var label = document.createElement("label");
    label.setAttribute("for", id);
    label.appendChild(document.createTextNode("Document"));
    var area = document.createElement("textarea");
    area.id = id;
    area.className = "doc-text";
    area.value = text || "";
    area.placeholder = "Paste the document the answer was written from.";
    var remove = document.createElement("button");
    remove.type = "button";
    remove.className = "remove secondary";
    remove.textContent = "Remove";
    remove.addEventListener("click", function () {
      box.remove();
      renumber();
    });
    box.appendChild(label);
    box.appendChild(area);
    box.appendChild(remove);
    list.appendChild(box);
    renumber();
    return area;
  }

  function emptyBox() {
    var areas = list.querySelectorAll("textarea.doc-text");
    for (var i = 0; i < areas.length; i++) if (!areas[i].value.trim()) return areas[i];
    return null;
  }

  function looksBinary(bytes) {
    for (var i = 0; i < Math.min(bytes.length, 8192); i++) if (bytes[i] === 0) return true;
    try {
      new TextDecoder("utf-8", { fatal: true }).decode(bytes);
      return false;
    } catch (e) {
      return true;
    }
  }

  async function readFile(file) {
    if (!TEXT_TYPES.test(file.name) && !HTML_TYPES.test(file.name)) {
      throw new Error(file.name + " is not a .txt, .md or .html document");
    }
    if (file.size > MAX_FILE_BYTES) {
      throw new Error(file.name + " is " + (file.size / 1e6).toFixed(1) + " MB, over the 1 MB a " +
        "document may have here; paste the part the answer relies on");
    }
    var bytes = new Uint8Array(await file.arrayBuffer());
    if (looksBinary(bytes)) {
      throw new Error(file.name + " is not text (it looks binary); drop a .txt, .md or .html document");
    }
    var text = new TextDecoder("utf-8").decode(bytes);
    if (!HTML_TYPES.test(file.name)) return { text: text, title: file.name };
    var page = await purr.post("/v1/extract", { html: text });
    return { text: page.text, title: page.title || file.name };
  }

  async function addFiles(files) {
    var added = 0, refused = [];
    for (var i = 0; i < files.length; i++) {
      try {
        var doc = await readFile(files[i]);
        var area = emptyBox();
        if (area) {
          area.value = doc.text;
          area.closest(".doc").setAttribute("data-title", doc.title);
          renumber();
        } else {
          addDocument(doc.text, doc.title);
        }
        added += 1;
      } catch (e) {
        refused.push(e.message || String(e));
      }
    }
    if (refused.length) say(refused.join("; "), true);
    else say(added + " document" + (added === 1 ? "" : "s") + " added", false);
  }

  addButton.addEventListener("click", function () { addDocument("").focus(); });
  fileInput.addEventListener("change", function () {
    addFiles(fileInput.files).then(function () { fileInput.value = ""; });
  });
  ["dragenter", "dragover"].forEach(function (type) {
    drop.addEventListener(type, function (ev) {
      ev.preventDefault();
      drop.classList.add("over");
    });
  });
  ["dragleave", "drop"].forEach(function (type) {
    drop.addEventListener(type, function () { drop.classList.remove("over"); });
  });
  drop.addEventListener("drop", function (ev) {
    ev.preventDefault();
    if (ev.dataTransfer && ev.dataTransfer.files.length) addFiles(ev.dataTransfer.files);
  });

  purr.documents = function () {
    var out = [];
    list.querySelectorAll(".doc").forEach(function (box) {
      var text = box.querySelector("textarea").value;
      if (text.trim()) out.push({ text: text, title: box.getAttribute("data-title") || null });
    });
    return out;
  };
  purr.addFiles = addFiles;
  addDocument("");
})();
