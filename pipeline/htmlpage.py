"""An HTML page: decoded text -> :class:`~pipeline.normalize.Page` (:func:`normalize_html`).

The page is checked against its limits before it is parsed
(:mod:`pipeline.pagelimits`), parsed once with lxml (libxml2; a page nested
over its 2048 levels is parsed again by BeautifulSoup, whose tree is copied
into an lxml one), its content element found (:func:`pipeline.pagemarkers.content_element`)
and walked into blocks (:class:`pipeline.htmlwalk.HtmlWalker`). Its title
and declared language come from its ``<head>`` (:func:`page_head`).

Raises :class:`~pipeline.errors.NormalizeError` naming the page and place
for a page over a limit, without a body or content element, or without text
in it. Warnings (returned in :attr:`Page.warnings`): no content element
(``<body>`` used), control characters written as character references,
tags the parser repaired, a missing ``</html>`` (:func:`markup_warnings`).
"""

from __future__ import annotations

import re
import warnings as _warnings

from bs4 import BeautifulSoup, MarkupResemblesLocatorWarning, NavigableString, Tag, XMLParsedAsHTMLWarning
from lxml import etree

from .chinese import LangTag, parse_lang_tag
from .cleantext import CONTROL_CHARS, collapse, has_control_chars
from .corpus import Source
from .errors import NormalizeError
from .htmlline import clean_page, element_classes, is_footnote
from .htmlwalk import HtmlWalker
from .limits import DEFAULT_LIMITS, PageLimits
from .page import Page
from .pagelimits import check_attributes, check_elements, check_nesting
from .pagemarkers import content_element
from .schema import markers


# One lxml parse serves the walk and the repair warnings. libxml2's limits on
# depth and text size are lifted (huge_tree): hostile pages nest deep.
_PARSER_OPTIONS = dict(encoding="utf-8", recover=True, remove_comments=True, remove_pis=True, huge_tree=True)


HEAD_END = re.compile(r"<body[\s>]", re.I)
HEAD_LIMIT = 65536


def _reference_controls(content) -> str | None:
    """A warning counting the control characters in the text of ``content``
    (character references gave them: the raw ones are gone before the parse,
    :func:`normalize`), or None when there are none."""
    text = etree.tostring(content, method="text", encoding="unicode", with_tail=False)
    if not has_control_chars(text):
        return None
    controls = CONTROL_CHARS.findall(text)
    return (f"{len(controls)} control characters written as character references removed, the first "
            f"U+{ord(controls[0]):04X}")


def _parse(text: str, max_nesting: int = DEFAULT_LIMITS.max_nesting, source_id: str = "", utf8: bytes | None = None):
    """(root element or None, libxml2's error log) of the page's HTML
    (``utf8``: ``text`` encoded, when the caller has it; else encoded here).

    libxml2 gives up on markup nested deeper than 2048 levels (the rest of
    the page is lost); such a page is parsed again by BeautifulSoup, whose
    tree has no depth limit, and its tree is copied into an lxml one: first
    its depth is measured (:func:`check_nesting`), and a page nested deeper
    than ``max_nesting`` fails (NormalizeError) before any tree is built.
    """
    parser = etree.HTMLParser(**_PARSER_OPTIONS)
    try:
        root = etree.fromstring(utf8 if utf8 is not None else text.encode("utf-8", "replace"), parser)
    except (etree.LxmlError, ValueError):
        root = None
    if any(e.type_name == "ERR_RESOURCE_LIMIT" for e in parser.error_log):
        root = None  # the partial tree is freed before the second parse
        check_nesting(text, max_nesting, source_id)
        root = _tree_from_soup(text)
    return root, parser.error_log


def _soup(text: str) -> BeautifulSoup:
    """BeautifulSoup's parse (lxml) of ``text``."""
    with _warnings.catch_warnings():  # bs4's advice on odd markup is for programmers, not about the page
        _warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        _warnings.simplefilter("ignore", MarkupResemblesLocatorWarning)
        return BeautifulSoup(text, "lxml")


def _tree_from_soup(text: str):
    """The lxml tree of BeautifulSoup's parse of ``text`` (comments dropped,
    attributes lxml cannot hold skipped). Explicit stack: any depth."""
    soup = _soup(text)
    root = etree.Element("html")
    # (children left, the copy, its last child so far: len() of an lxml element counts its children)
    stack = [[iter(soup.html.children if soup.html else soup.children), root, None]]
    while stack:
        frame = stack[-1]
        children, parent, last = frame
        child = next(children, None)
        if child is None:
            stack.pop()
        elif isinstance(child, Tag):
            el = etree.SubElement(parent, child.name)
            for name, value in child.attrs.items():
                try:
                    el.set(name, " ".join(value) if isinstance(value, list) else value)
                except ValueError:
                    pass
            frame[2] = el
            stack.append([iter(child.children), el, None])
        elif type(child) is NavigableString:  # not a comment, doctype or CDATA
            if last is None:
                parent.text = (parent.text or "") + str(child)
            else:
                last.tail = (last.tail or "") + str(child)
    return root


# An end tag that closes a title's raw text: </title then whitespace, / or > (not </titles>).
TITLE_END = re.compile(r"</title[\t\n\f\r />]", re.I)


def _titles_closed(head: str) -> bool:
    """Whether the last ``<title`` of ``head`` (the text BeautifulSoup parses)
    is closed in it by a real end tag. Then the page's first title closes
    before ``<body`` too, and the full parse's title is the one BeautifulSoup
    finds; an unclosed title's raw text would run on into the body."""
    last = head.lower().rfind("<title")
    return last >= 0 and TITLE_END.search(head, last) is not None


def page_head(text: str, root=None) -> tuple[str, LangTag]:
    """(title, declared language) from the page's ``<head>``: from ``root``,
    the page's lxml tree, when it has a ``<title>`` in ``<head>`` and a
    ``lang`` on ``<html>`` (most pages: no second parse); else parsed with
    BeautifulSoup, which finds a title or a ``<meta http-equiv>`` wherever
    the head's markup put it: only the text before ``<body`` (at most 64 KB)
    is parsed, so it costs little whatever the page's size."""
    end = HEAD_END.search(text, 0, HEAD_LIMIT)
    head = text[:end.start() if end else HEAD_LIMIT]
    tree_lang = root.get("lang", "").strip() if root is not None and root.tag == "html" else ""
    if tree_lang and _titles_closed(head):
        tree_head = root.find("head")
        title = next(tree_head.iter("title"), None) if tree_head is not None else None
        # Only a title right in <head>: BeautifulSoup's text leaves out one inside <template>, <rt> or <rp>.
        if title is not None and title.getparent() is tree_head:
            return collapse("".join(title.itertext())).strip(), parse_lang_tag(tree_lang)
    soup = _soup(head)
    title = collapse(soup.title.get_text()).strip() if soup.title else ""
    html = soup.find("html")
    lang = html.get("lang") if html is not None else None
    if not lang:
        meta = soup.find("meta", attrs={"http-equiv": re.compile("^content-language$", re.I)})
        lang = meta.get("content") if meta is not None else None
    return title, parse_lang_tag(lang.strip()) if isinstance(lang, str) and lang.strip() else LangTag()


def normalize_html(text: str, source: Source, limits: PageLimits = DEFAULT_LIMITS, utf8: bytes | None = None) -> Page:
    """HTML text -> Page. Warns (does not fail) when no content element exists.
    ``utf8``: ``text`` encoded as UTF-8 when the caller has it (the page's
    bytes: :attr:`pipeline.encoding.Decoded.utf8`), read instead of encoding
    the text for the checks and the parser.

    Raises NormalizeError naming the source when the page has neither a
    content element nor a body, or no text in it, and when it is over one of
    ``limits``: more than ``max_elements`` start tags, an element with more
    than ``max_attributes`` attributes, or more than ``max_page_attributes``
    in all (checked before parsing), more than ``max_nesting`` elements open at once
    (checked before the tree is built), more than ``max_records`` blocks.
    """
    warnings: list[str] = []
    check_elements(text, limits.max_elements, source.id)
    check_attributes(text, limits.max_attributes, source.id, limits.max_page_attributes, utf8)
    root, errors = _parse(text, limits.max_nesting, source.id, utf8)
    content = content_element(root) if root is not None else None
    if content is None:
        raise NormalizeError("page has no body or content element", source_id=source.id, place="<body>")
    if content.tag == "body":
        selectors = markers()["content_selectors"]
        warnings.append(f"{source.id}: no content element ({', '.join(selectors[:3])} ...); used <body>")
    # A list, not a generator: lxml frees the proxy of an element dropped while its ancestors have
    # none by walking up to one that has, so dropping them one by one costs the depth each time.
    candidates = list(content.iter("aside", "div", "li", "section"))
    footnote_ids = frozenset(el.get("id") for el in candidates if el.get("id") and is_footnote(el, element_classes(el)))
    del candidates
    clean = clean_page(content)
    references = None if clean else _reference_controls(content)
    if references:
        warnings.append(f"{source.id}: {references}")
    walker = HtmlWalker(footnote_ids, clean, source.language, limits.max_records, source.id)
    walker.walk(content)
    if not walker.blocks:
        raise NormalizeError("page has no text in its content element", source_id=source.id, place=f"<{content.tag}>")
    warnings.extend(markup_warnings(text, errors, source.id))
    title, lang = page_head(text, root)
    return Page(source.id, source.language, source.script, source.region, title, walker.blocks, warnings, lang)


HTML_OPEN = re.compile(r"<html[\s>]", re.I)
HTML_CLOSE = re.compile(r"</html\s*>", re.I)


def markup_warnings(text: str, errors, source_id: str) -> list[str]:
    """Warnings for HTML that the parser had to repair: mismatched closing
    tags (libxml2's ``errors`` log of the parse, with line and column) and a
    page that ends without ``</html>`` (probably truncated). The page is
    still processed."""
    warnings = []
    mismatched = [e for e in errors if e.type_name == "ERR_TAG_NAME_MISMATCH"]
    if mismatched:
        first = mismatched[0]
        warnings.append(f"{source_id}: {len(mismatched)} mismatched or unclosed tags repaired, the first at "
                        f"line {first.line}, column {first.column}: {first.message}")
    # </html> is looked for in the page's last 4 KB first: a search from the start scans the whole page
    if HTML_OPEN.search(text) and not (HTML_CLOSE.search(text, max(0, len(text) - 4096)) or HTML_CLOSE.search(text)):
        warnings.append(f"{source_id}: page ends at line {text.count(chr(10)) + 1} without </html>; "
                        "it may be truncated")
    return warnings
