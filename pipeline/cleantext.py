"""Text as a reader sees it, for normalize: str -> str and checks on str.

* :func:`clean_text`: HTML entities left after parsing decoded, invisible
  format characters and control characters removed; :func:`collapse` also
  turns each run of white space into one space.
* :func:`clean_href`: a link target without those characters.
* :data:`CONTROL_CHARS` and :func:`has_control_chars`: the C0 and C1 control
  characters normalize removes from a raw page (with a warning);
  :func:`has_control_bytes`: the same test on a page's UTF-8 bytes.

Pure functions of strings: no parsing, no errors raised.
"""

from __future__ import annotations

import html
import re


WHITESPACE = re.compile(r"\s+")


def collapse(text: str) -> str:
    """:func:`clean_text` with each run of white space one space."""
    return WHITESPACE.sub(" ", clean_text(text))


# Format characters that draw nothing (zero-width space and joiners, word joiner, BOM, soft hyphen,
# bidirectional marks and embeddings): removed, so they never split a card name or a date.
INVISIBLE_CHARS = "\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
INVISIBLE = re.compile(f"[{INVISIBLE_CHARS}]")
# What clean_text removes: the invisible characters, and the control characters normalize removes from
# the raw page (CONTROL_CHARS) when a character reference or an entity gave them after the raw text was
# cleaned (&#x1b; &#27 &#x7f; &#x81;: libxml2 decodes them to the raw characters).
UNWANTED = re.compile(f"[{INVISIBLE_CHARS}\x00-\x08\x0e-\x1f\x7f-\x9f]")
ENTITY = re.compile(r"&(?:[a-zA-Z][a-zA-Z0-9]{1,31}|#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6});")


def clean_text(text: str) -> str:
    """Text as a reader sees it: HTML entities still in it after parsing (a
    page that escaped them twice: ``&amp;amp;`` -> ``&amp;`` -> ``&``) decoded,
    invisible format characters and control characters (:data:`UNWANTED`,
    the same C0 and C1 controls normalize removes from the raw page) removed."""
    if "&" in text:
        for _ in range(3):  # each pass undoes one level of escaping
            if not ENTITY.search(text):
                break
            text = html.unescape(text)
    return UNWANTED.sub("", text) if UNWANTED.search(text) else text


def clean_href(href: str) -> str:
    """A link target without the characters :func:`clean_text` removes
    (``href="x&#x1b;[31m"``: libxml2 decodes references in attributes too)."""
    if href.isprintable():  # every character UNWANTED names is unprintable (Unicode categories Cc and Cf)
        return href
    return UNWANTED.sub("", href) if UNWANTED.search(href) else href


# C0 and C1 controls other than tab, newline, vertical tab, form feed and carriage return.
CONTROL_CHARS = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f]")
# The same characters in UTF-8: C0 and DEL are single bytes no other character's bytes hold;
# C1 (U+0080-U+009F) is \xc2 followed by \x80-\x9f.
_NOT_C0_BYTES = bytes(b for b in range(256) if not (b <= 0x08 or 0x0e <= b <= 0x1f or b == 0x7f))
_C1_UTF8 = re.compile(rb"\xc2[\x80-\x9f]")


def has_control_chars(text: str, chunk: int = 1 << 20) -> bool:
    """Whether ``text`` holds a character of :data:`CONTROL_CHARS`, read
    from its UTF-8 bytes a chunk of characters at a time: a translation that
    deletes every other byte, then a search for the C1 lead byte, both in C
    (a third of the time of the pattern's scan, which tests a character
    class at every character of the page)."""
    return any(has_control_bytes(text[at:at + chunk].encode("utf-8", "surrogatepass"))
               for at in range(0, len(text), chunk))


def has_control_bytes(raw: bytes) -> bool:
    """Whether the UTF-8 bytes ``raw`` (whole characters) hold a character of
    :data:`CONTROL_CHARS`: :func:`has_control_chars` of their text, without
    encoding it (a page read from valid UTF-8 is checked in its own bytes)."""
    return bool(raw.translate(None, _NOT_C0_BYTES)) or (b"\xc2" in raw and _C1_UTF8.search(raw) is not None)
