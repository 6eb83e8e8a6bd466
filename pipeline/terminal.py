"""Text the command line prints, made safe for a terminal.

Ruling text comes from pages written by strangers, and scenario ids, file
names and queries from the user: any of them may hold characters a
terminal acts on rather than shows (ESC and CSI start colour and cursor
sequences, CR and a newline forge a line of output, BEL rings, a bidi
override reverses what follows). :func:`terminal_safe` is the one function
every line the CLI prints goes through; :func:`json_safe` does the same for
JSON text, whose own escaping leaves DEL, C1 controls and bidi controls raw.
"""

from __future__ import annotations

import re
from functools import cache

# C0 controls but tab, DEL and C1 controls; the Arabic letter mark, LRM and RLM; the line and paragraph
# separators, bidi embeddings and overrides (U+202A-U+202E) and isolates (U+2066-U+2069); lone surrogates
# (bytes that were not UTF-8). Every one of them is a character str.isprintable() refuses (Cc, Cf, Zl,
# Zp, Cs), so printable text is safe without a regex (tests/e2e/test_input_files_and_terminal_output.py).
_BEYOND_C0 = "\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff"
_SHORT = {"\n": "\\n", "\r": "\\r"}


@cache
def _pattern(json_text: bool) -> re.Pattern:
    """:data:`UNSAFE` (or, for JSON text, :data:`JSON_UNSAFE`: what JSON's encoder leaves raw; it escapes
    every C0 control inside a string itself, a raw newline in JSON text is its layout), compiled once
    a process prints a text that needs it (the compile is 2 % of a fast command's start)."""
    return re.compile(f"[{_BEYOND_C0}]" if json_text else f"[\x00-\x08\x0a-\x1f{_BEYOND_C0}]")


def __getattr__(name: str) -> re.Pattern:  # UNSAFE, JSON_UNSAFE: the patterns, for tests and tools
    if name in ("UNSAFE", "JSON_UNSAFE"):
        return _pattern(name == "JSON_UNSAFE")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _escape(match: re.Match) -> str:
    ch = match.group(0)
    code = ord(ch)
    return _SHORT.get(ch) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def terminal_safe(text: str) -> str:
    """``text`` with every character of :data:`UNSAFE` written as a visible
    escape: ``\\n``, ``\\r``, ``\\x1b``, ``\\x9b``, ``\\u202e`` (one line: a
    newline in the text never starts a line of output). Tab and every
    printable character are kept; text without unsafe characters is
    returned as it is, so applying it twice changes nothing more."""
    if text.isprintable():
        return text
    unsafe = _pattern(False)
    return unsafe.sub(_escape, text) if unsafe.search(text) else text


def json_safe(json_text: str) -> str:
    """JSON text (``json.dumps(..., ensure_ascii=False)``) with the
    characters of :data:`UNSAFE` its encoder leaves raw (:data:`JSON_UNSAFE`:
    DEL, C1 controls, bidi controls, line separators, lone surrogates)
    written as ``\\uXXXX`` escapes: the same JSON value, safe to print.
    They can only stand inside a string: JSON's own syntax is ASCII."""
    if json_text.isprintable():
        return json_text
    unsafe = _pattern(True)
    if not unsafe.search(json_text):
        return json_text
    return unsafe.sub(lambda m: f"\\u{ord(m.group(0)):04x}", json_text)
