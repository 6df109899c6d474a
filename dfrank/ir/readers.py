"""Collections, topics and judgments in the formats people have: the SMART files of
Cranfield and CISI, TREC topic files, and the TSV / JSON-lines exports of ir_datasets,
BEIR and Pyserini. Every reader returns plain dicts with str keys: documents ``{docno:
text}``, topics ``{qid: text}``, qrels ``{qid: {docno: relevance}}``."""

import json
import os
import re

from ..errors import DataFormatError
from ..io.svmlight import open_maybe_gzip

__all__ = ["read_smart", "load_cranfield", "load_cisi", "read_collection", "read_topics"]


def _text(path):
    with open_maybe_gzip(path) as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:   # the old SMART files are Latin-1
        text = raw.decode("latin-1")
    return text.replace("\r\n", "\n")


def read_smart(path):
    """Records of a SMART file (``.I id`` then ``.T``/``.W``/... fields): a list of
    ``(id, {field letter: text})``."""
    records = []
    for chunk in re.split(r"^\.I\s+", _text(path), flags=re.M)[1:]:
        head, _, body = chunk.partition("\n")
        fields, cur = {}, None
        for line in body.split("\n"):
            m = re.match(r"^\.([A-Z])\s*$", line)
            if m:
                cur = m.group(1)
                fields.setdefault(cur, "")
            elif cur is not None:
                fields[cur] += line + "\n"
        records.append((head.strip(), fields))
    if not records:
        raise DataFormatError("no '.I' record (not a SMART file?)", path=path)
    return records


def load_cranfield(folder):
    """Cranfield 1400: ``(docs, topics, qrels)``. Queries are numbered by their position in
    ``cran.qry`` (as ``cranqrel`` numbers them); grades are 5 - code for codes 1 (complete
    answer) .. 4 (minimum interest); the one undocumented -1 judgment per query is left
    out (not relevant)."""
    docs = {}
    for rid, f in read_smart(os.path.join(folder, "cran.all.1400.gz")):
        w = f.get("W", "").strip()
        docs[rid] = w if w else f.get("T", "")
    topics = {str(i + 1): f.get("W", "") for i, (_, f) in
              enumerate(read_smart(os.path.join(folder, "cran.qry")))}
    qrels = {}
    with open(os.path.join(folder, "cranqrel")) as fh:
        for line in fh:
            parts = line.split()
            if len(parts) >= 3 and 1 <= int(parts[2]) <= 4:
                qrels.setdefault(parts[0], {})[parts[1]] = 5 - int(parts[2])
    return docs, topics, qrels


def load_cisi(folder):
    """CISI: ``(docs, topics, qrels)``; documents are title + abstract, judgments binary
    (76 of the 112 queries have some)."""
    docs = {r: f.get("T", "") + " " + f.get("W", "")
            for r, f in read_smart(os.path.join(folder, "CISI.ALL.gz"))}
    topics = {r: f.get("W", "") for r, f in read_smart(os.path.join(folder, "CISI.QRY"))}
    qrels = {}
    with open(os.path.join(folder, "CISI.REL")) as fh:
        for line in fh:
            parts = line.split()
            if len(parts) >= 2:
                qrels.setdefault(parts[0], {})[parts[1]] = 1
    return docs, topics, qrels


_ID_KEYS = ("_id", "docno", "doc_id", "id", "query_id", "qid")
_TEXT_KEYS = ("text", "contents", "body", "query", "title")


def _kind(path, kind, text):
    if kind is not None:
        return kind
    name = os.fspath(path).lower().removesuffix(".gz")
    if name.endswith((".jsonl", ".json")):
        return "jsonl"
    if name.endswith(".tsv"):
        return "tsv"
    if "<top>" in text[:10000]:
        return "trec"
    raise DataFormatError("cannot tell the format from the name: pass format='tsv', "
                          "'jsonl' or 'trec'", path=path)


def _records(path, kind, what):
    """(line, id, text) of a TSV (``id<TAB>text``, further columns joined) or JSON-lines
    file (id from _id/docno/doc_id/id, text from title + text/contents/body/query)."""
    text = _text(path)
    kind = _kind(path, kind, text)
    out = []
    if kind == "trec":
        return kind, text
    for i, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        if kind == "tsv":
            parts = line.split("\t")
            if len(parts) < 2:
                raise DataFormatError(f"expected 'id<TAB>text' for a {what}", path=path,
                                      line=i, token=line[:40])
            out.append((i, parts[0].strip(), " ".join(parts[1:])))
        else:
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise DataFormatError(f"not JSON ({e.msg})", path=path, line=i,
                                      token=line[:40]) from None
            key = next((k for k in _ID_KEYS if k in obj), None)
            if key is None or not isinstance(obj, dict):
                raise DataFormatError(f"a {what} record needs an id field (one of "
                                      f"{', '.join(_ID_KEYS)})", path=path, line=i)
            body = " ".join(str(obj[k]) for k in ("title",) if obj.get(k)) + " " + \
                " ".join(str(obj[k]) for k in _TEXT_KEYS[:-1] if obj.get(k))
            out.append((i, str(obj[key]), body.strip()))
    return kind, out


def _as_dict(records, path, what):
    out = {}
    for i, key, text in records:
        if key in out:
            raise DataFormatError(f"{what} id {key!r} appears twice", path=path, line=i)
        out[key] = text
    if not out:
        raise DataFormatError(f"no {what} in the file", path=path)
    return out


def read_collection(path, format=None):
    """``{docno: text}`` from a TSV (``docno<TAB>text``, as ir_datasets and MS MARCO
    export) or JSON-lines file (BEIR's ``corpus.jsonl``: _id, title, text; Pyserini's: id,
    contents), plain or gzip."""
    kind, recs = _records(path, format, "document")
    if kind == "trec":
        raise DataFormatError("a TREC topics file is not a collection", path=path)
    return _as_dict(recs, path, "document")


def read_topics(path, format=None):
    """``{qid: text}`` from a TREC topics file (``<top> <num> Number: 301 <title> ...``;
    the title is the query), a TSV (``qid<TAB>text``) or JSON-lines file (BEIR's
    ``queries.jsonl``: _id, text)."""
    kind, recs = _records(path, format, "topic")
    if kind != "trec":
        return _as_dict(recs, path, "topic")
    out = {}
    for block in re.findall(r"<top>(.*?)</top>", recs, flags=re.S | re.I):
        num = re.search(r"<num>\s*(?:Number:)?\s*(\S+)", block, flags=re.I)
        title = re.search(r"<title>\s*(?:Topic:)?(.*?)(?=<\w+>|$)", block,
                          flags=re.S | re.I)
        if num is None or title is None:
            raise DataFormatError("a <top> block without <num> or <title>", path=path,
                                  token=block.strip()[:40])
        if num.group(1) in out:
            raise DataFormatError(f"topic {num.group(1)!r} appears twice", path=path)
        out[num.group(1)] = " ".join(title.group(1).split())
    if not out:
        raise DataFormatError("no <top> block", path=path)
    return out
