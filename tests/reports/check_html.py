#!/usr/bin/env python3
"""tests/reports/check_html.py — strict checks of an fpcert HTML report.

Usage: check_html.py REPORT.html [--src ID=FILE.json ...] [--require-tagged]

1. Well-formed and validly nested under a strict reading of Python's html.parser: every
   non-void element closed explicitly and in order, no stray end tags, no self-closing HTML
   elements, no duplicate attributes or ids, known entities only, no raw '<' in text, the
   content-model rules the report relies on (table parts, lists, block-in-inline, svg children).
2. Self-contained: no <script>, no external resource (src=, <link>, url(), @import, http(s) in
   attributes other than the SVG namespace), exactly one <style>.
3. Numbers: every element with data-ptr is resolved in the JSON document named by data-src
   (fpcert results JSON for r<i>, a conversion record for c<i>); its data-value must equal the
   JSON value exactly and its text must be printf "%.4g" of it (integers in full, booleans
   yes/no). data-sum elements must equal the sum of the referenced values. Positions the attention sections derive
   (data-derive: the query row of a case's worst element, ...) must equal those recomputed from the case. With
   --require-tagged, every td.num cell holding a digit must hold a tagged number.
Exit 0 when clean; 1 with one line per problem otherwise.
"""
import json
import math
import re
import sys
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
ENTITIES = {"amp", "lt", "gt", "quot", "apos", "nbsp"}
BLOCK = {"div", "p", "table", "ul", "ol", "dl", "section", "article", "header", "footer", "nav", "main", "h1", "h2",
         "h3", "h4", "h5", "h6", "pre", "figure", "figcaption", "form", "blockquote", "hr"}
INLINE_ONLY_PARENTS = {"p", "span", "a", "b", "i", "em", "strong", "code", "sub", "sup", "small", "label",
                       "h1", "h2", "h3", "h4", "h5", "h6", "th"}
SVG_ELEMENTS = {"svg", "g", "path", "line", "polyline", "polygon", "rect", "circle", "ellipse", "text", "tspan",
                "title", "defs", "clippath", "lineargradient", "stop", "desc"}
ALLOWED_PARENT = {
    "tr": {"table", "thead", "tbody", "tfoot"},
    "td": {"tr"}, "th": {"tr"},
    "thead": {"table"}, "tbody": {"table"}, "tfoot": {"table"}, "caption": {"table"},
    "li": {"ul", "ol"},
    "dt": {"dl", "div"}, "dd": {"dl", "div"},
    "figcaption": {"figure"},
    "head": {"html"}, "body": {"html"},
    "title": {"head", "svg", "g", "circle", "rect", "polygon", "path", "line", "text"},
    "meta": {"head"}, "style": {"head"},
    "source": {"picture", "video", "audio"},
}


class Checker(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=False)
        self.errors = []
        self.stack = []
        self.ids = set()
        self.counts = {}
        self.saw_doctype = False
        self.numbers = []  # (attrs, text, line)
        self.capture = []  # open captures: [attrs, text parts, depth, line]
        self.num_cells = []  # (text, has_tagged, line)
        self.cell = None

    def err(self, msg):
        line, col = self.getpos()
        self.errors.append(f"line {line}:{col}: {msg}")

    def handle_decl(self, decl):
        if decl.lower() == "doctype html":
            self.saw_doctype = True
        else:
            self.err(f"unexpected declaration <!{decl}>")

    def in_svg(self):
        return "svg" in self.stack

    def check_attrs(self, tag, attrs):
        names = [a for a, _ in attrs]
        if len(names) != len(set(names)):
            self.err(f"<{tag}> has a duplicate attribute: {names}")
        for a, v in attrs:
            v = v or ""
            if a == "id":
                if v in self.ids:
                    self.err(f"duplicate id '{v}'")
                self.ids.add(v)
            if a.startswith("on"):
                self.err(f"event handler attribute {a} (no script allowed)")
            if a in ("src", "srcset"):
                self.err(f"external resource {a}={v!r}")
            if a == "href" and not v.startswith("#"):
                self.err(f"link leaves the document: href={v!r}")
            if a == "xmlns" and v != "http://www.w3.org/2000/svg":
                self.err(f"unexpected namespace {v!r}")
            if a != "xmlns" and re.search(r"https?://", v):
                self.err(f"network reference in {a}={v!r}")
            if a == "style" and ("url(" in v or "@import" in v):
                self.err(f"external reference in style attribute: {v!r}")
            if re.search(r"\b(nan|inf)\b", v) and a in ("x", "y", "cx", "cy", "r", "width", "height", "d", "points",
                                                        "x1", "x2", "y1", "y2", "transform", "viewBox"):
                self.err(f"<{tag} {a}={v!r}>: a coordinate that is not a number")

    def open_element(self, tag, attrs, self_closing):
        tag_l = tag.lower()
        self.counts[tag_l] = self.counts.get(tag_l, 0) + 1
        parent = self.stack[-1] if self.stack else None
        if tag_l == "script":
            self.err("<script> found: the report must need no script")
        if tag_l in ("link", "iframe", "object", "embed", "img"):
            self.err(f"<{tag_l}> not allowed in a self-contained report")
        if parent is None and tag_l != "html":
            self.err(f"<{tag_l}> outside <html>")
        if self.in_svg():
            if tag_l not in SVG_ELEMENTS:
                self.err(f"<{tag_l}> inside <svg>")
        elif self_closing and tag_l not in VOID:
            self.err(f"self-closing <{tag_l}/> is not valid HTML")
        allowed = ALLOWED_PARENT.get(tag_l)
        if allowed and parent not in allowed and not (tag_l == "title" and parent == "head"):
            self.err(f"<{tag_l}> inside <{parent}>")
        if parent in ("table",) and tag_l not in ("thead", "tbody", "tfoot", "tr", "caption", "colgroup"):
            self.err(f"<{tag_l}> directly inside <table>")
        if parent in ("tr",) and tag_l not in ("td", "th"):
            self.err(f"<{tag_l}> directly inside <tr>")
        if parent in ("ul", "ol") and tag_l != "li":
            self.err(f"<{tag_l}> directly inside <{parent}>")
        if tag_l in BLOCK and not self.in_svg():
            for anc in self.stack:
                if anc in INLINE_ONLY_PARENTS:
                    self.err(f"block <{tag_l}> inside <{anc}>")
                    break
        if tag_l == "a" and "a" in self.stack:
            self.err("nested <a>")
        self.check_attrs(tag_l, attrs)
        d = dict(attrs)
        if "data-ptr" in d or "data-sum" in d:
            self.capture.append([d, [], len(self.stack), self.getpos()[0]])
        if tag_l == "td" and "num" in (d.get("class") or "").split():
            self.cell = {"text": [], "tagged": False, "line": self.getpos()[0], "depth": len(self.stack)}
        if self.cell is not None and ("data-ptr" in d or "data-sum" in d):
            self.cell["tagged"] = True
        if tag_l not in VOID and not self_closing:
            self.stack.append(tag_l)

    def handle_starttag(self, tag, attrs):
        self.open_element(tag, attrs, False)

    def handle_startendtag(self, tag, attrs):
        self.open_element(tag, attrs, True)

    def handle_endtag(self, tag):
        tag_l = tag.lower()
        if tag_l in VOID:
            self.err(f"end tag for void element </{tag_l}>")
            return
        if not self.stack:
            self.err(f"stray end tag </{tag_l}>")
            return
        if self.stack[-1] != tag_l:
            self.err(f"</{tag_l}> closes <{self.stack[-1]}> (open: {' > '.join(self.stack[-4:])})")
            if tag_l in self.stack:
                while self.stack and self.stack[-1] != tag_l:
                    self.stack.pop()
            else:
                return
        self.stack.pop()
        depth = len(self.stack)
        while self.capture and self.capture[-1][2] == depth:
            attrs, parts, _, line = self.capture.pop()
            self.numbers.append((attrs, "".join(parts), line))
        if self.cell is not None and tag_l == "td" and self.cell["depth"] == depth:
            self.num_cells.append(("".join(self.cell["text"]), self.cell["tagged"], self.cell["line"]))
            self.cell = None

    def handle_data(self, data):
        if "<" in data and self.stack and self.stack[-1] not in ("style",):
            self.err(f"raw '<' in text: {data[:40]!r}")
        if self.stack and self.stack[-1] == "style":
            if "url(" in data or "@import" in data:
                self.err("external reference in <style>")
        for c in self.capture:
            c[1].append(data)
        if self.cell is not None:
            self.cell["text"].append(data)

    def handle_entityref(self, name):
        if name not in ENTITIES:
            self.err(f"unknown entity &{name};")
        ch = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'", "nbsp": "\u00a0"}.get(name, "?")
        for c in self.capture:
            c[1].append(ch)
        if self.cell is not None:
            self.cell["text"].append(ch)

    def handle_charref(self, name):
        try:
            ch = chr(int(name[1:], 16) if name[:1] in "xX" else int(name))
        except ValueError:
            self.err(f"bad character reference &#{name};")
            return
        for c in self.capture:
            c[1].append(ch)
        if self.cell is not None:
            self.cell["text"].append(ch)

    def handle_comment(self, data):
        pass

    def handle_pi(self, data):
        self.err(f"processing instruction <?{data}>")

    def unknown_decl(self, data):
        self.err(f"unknown declaration {data!r}")


def resolve(doc, ptr):
    """RFC 6901 JSON pointer."""
    if ptr == "":
        return doc
    if not ptr.startswith("/"):
        raise KeyError(f"pointer {ptr!r} does not start with '/'")
    cur = doc
    for tok in ptr[1:].split("/"):
        tok = tok.replace("~1", "/").replace("~0", "~")
        if isinstance(cur, list):
            cur = cur[int(tok)]
        elif isinstance(cur, dict):
            cur = cur[tok]
        else:
            raise KeyError(f"{ptr}: cannot descend into {type(cur).__name__} at {tok!r}")
    return cur


def as_float(v):
    if isinstance(v, bool):
        raise TypeError("boolean where a number was expected")
    if isinstance(v, (int, float)):
        return float(v)
    if v in ("inf", "-inf", "nan"):
        return float(v)
    if v is None:
        return float("nan")
    raise TypeError(f"not a number: {v!r}")


def same_float(a, b):
    return (math.isnan(a) and math.isnan(b)) or a == b


def check_numbers(checker, docs):
    errors = []
    checked = 0
    for attrs, text, line in checker.numbers:
        text = text.strip()
        kind = attrs.get("data-kind", "float")
        shown_value = attrs.get("data-value")
        where = f"line {line}"
        try:
            if "data-sum" in attrs:
                total = 0
                for ref in attrs["data-sum"].split():
                    src, _, ptr = ref.partition(":")
                    if src not in docs:
                        raise KeyError(f"no document {src!r} given (--src)")
                    total += int(resolve(docs[src], ptr))
                if str(total) != shown_value or text != str(total):
                    errors.append(f"{where}: sum {attrs['data-sum']} = {total}, shown {text!r} (data-value {shown_value!r})")
                checked += 1
                continue
            src = attrs.get("data-src")
            if src not in docs:
                if docs:
                    errors.append(f"{where}: data-src {src!r} has no JSON document (--src)")
                continue
            v = resolve(docs[src], attrs["data-ptr"])
            if kind == "int":
                if isinstance(v, bool) or not isinstance(v, int):
                    errors.append(f"{where}: {src}{attrs['data-ptr']} is {v!r}, shown as an integer")
                elif shown_value != str(v) or text != str(v):
                    errors.append(f"{where}: {src}{attrs['data-ptr']} = {v}, shown {text!r} (data-value {shown_value!r})")
            elif kind == "bool":
                if not isinstance(v, bool):
                    errors.append(f"{where}: {src}{attrs['data-ptr']} is {v!r}, shown as a boolean")
                elif shown_value != ("true" if v else "false") or text != ("yes" if v else "no"):
                    errors.append(f"{where}: {src}{attrs['data-ptr']} = {v}, shown {text!r}")
            else:
                fv = as_float(v)
                dv = float(shown_value)
                if not same_float(fv, dv):
                    errors.append(f"{where}: {src}{attrs['data-ptr']} = {fv!r} but data-value = {shown_value!r}")
                expect = "%.4g" % fv
                if text != expect:
                    errors.append(f"{where}: {src}{attrs['data-ptr']} = {fv!r} shown as {text!r}, expected {expect!r}")
            checked += 1
        except (KeyError, IndexError, ValueError, TypeError) as e:
            errors.append(f"{where}: {attrs.get('data-src')}{attrs.get('data-ptr')}: {e}")
    return errors, checked


# Positions the attention and backward sections derive from a case record (reports/html/html_attention.cpp, dpos):
# <span class="d" data-src="r0" data-case="/cases/3" data-derive="query:worst">12</span>, recomputed here from the
# case's worst_index, n (the head dimension) and the shape its runner records in achieved (attention_*).
DERIVED = re.compile(r'<span class="d" data-src="([^"]*)" data-case="([^"]*)" data-derive="([^"]*)">([^<]*)</span>')


def derive(case, what):
    a = case.get("achieved", {})
    ai = lambda k: int(a[k])
    if what in ("len_q", "len_k"):
        return ai("attention_" + what)
    quantity, _, of = what.partition(":")
    if of == "worst":
        e, d = case["worst_index"], case["n"]
        row, lq, hq = e // d, ai("attention_len_q"), ai("attention_heads_q")
        return {"batch": row // (hq * lq), "head": (row // lq) % hq, "query": row % lq, "column": e % d}[quantity]
    row = ai("attention_bwd_worst_row_" + of)
    if of == "dQ":
        return {"row": row, "head": (row // ai("attention_len_q")) % ai("attention_heads_q"), "query": row % ai("attention_len_q")}[quantity]
    return {"row": row, "kv_head": (row // ai("attention_len_k")) % ai("attention_heads_kv"), "key": row % ai("attention_len_k")}[quantity]


def check_derived(text, docs):
    errors, checked = [], 0
    found = DERIVED.findall(text)
    spans = text.count('<span class="d" ')
    if len(found) != spans:
        errors.append(f"{spans - len(found)} derived position(s) not in the form data-src, data-case, data-derive")
    for src, ptr, what, shown in found:
        if src not in docs:
            if docs:
                errors.append(f"derived {what} of {src}{ptr}: no JSON document {src!r} (--src)")
            continue
        try:
            want = derive(resolve(docs[src], ptr), what)
        except (KeyError, IndexError, ValueError, TypeError, ZeroDivisionError) as e:
            errors.append(f"derived {what} of {src}{ptr}: {e!r}")
            continue
        if shown != str(want):
            errors.append(f"derived {what} of {src}{ptr} is {want}, shown {shown!r}")
        checked += 1
    return errors, checked


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    path = argv[1]
    docs = {}
    require_tagged = False
    i = 2
    while i < len(argv):
        a = argv[i]
        if a == "--src":
            name, _, f = argv[i + 1].partition("=")
            with open(f, encoding="utf-8") as fh:
                docs[name] = json.load(fh)
            i += 2
        elif a == "--require-tagged":
            require_tagged = True
            i += 1
        else:
            print(f"unknown argument {a}")
            return 2
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    c = Checker()
    c.feed(text)
    c.close()
    errors = list(c.errors)
    if c.stack:
        errors.append(f"unclosed elements at the end: {' > '.join(c.stack)}")
    if not c.saw_doctype:
        errors.append("no <!DOCTYPE html>")
    for tag in ("html", "head", "body", "title", "style", "h1"):
        if c.counts.get(tag if tag != "title" else "title", 0) < 1:
            errors.append(f"no <{tag}>")
    for tag in ("html", "head", "body", "style", "h1", "main"):
        if c.counts.get(tag, 0) > 1:
            errors.append(f"<{tag}> appears {c.counts[tag]} times")
    if not re.search(r'<meta name="viewport"', text):
        errors.append("no viewport meta (phone width)")
    if "@media print" not in text:
        errors.append("no print stylesheet")
    nerr, checked = check_numbers(c, docs)
    errors += nerr
    derr, dchecked = check_derived(text, docs)
    errors += derr
    checked += dchecked
    if require_tagged:
        for cell_text, tagged, line in c.num_cells:
            if re.search(r"\d", cell_text) and not tagged:
                errors.append(f"line {line}: numeric cell {cell_text.strip()!r} is not a tagged JSON value")
    if docs and checked == 0:
        errors.append("no tagged numbers found")
    for e in errors[:200]:
        print(e)
    if len(errors) > 200:
        print(f"... and {len(errors) - 200} more")
    print(f"check_html: {path}: {len(errors)} problem(s); {checked} numbers checked against "
          f"{len(docs)} JSON document(s); {sum(c.counts.values())} elements")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
