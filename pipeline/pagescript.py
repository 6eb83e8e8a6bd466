"""The script and language of a normalized page's text: :class:`~pipeline.normalize.Page` -> settled in place, warnings.

* :func:`settle_script`: the script and region a Chinese page is really
  written in (the manifest, else the page's ``lang``, checked against its
  characters: :func:`pipeline.chinese.resolve_script_region`); sets
  ``page.script``, ``page.region`` (and ``page.language`` when the manifest
  gives none) and adds its warnings.
* :func:`language_warning`: a warning when most letters of a page are not in
  the script of its declared language (:data:`SCRIPT_LETTERS`).

Raise nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from .chinese import char_counts, resolve_script_region

if TYPE_CHECKING:
    from .page import Block, Page


def page_text(page: Page) -> str:
    """The text of every line of ``page``, one line a row."""
    return "\n".join(line.text for block in page.blocks for line in block.lines)


def settle_script(page: Page, chars: Mapping[str, int] | None = None) -> None:
    """Set ``page.script`` and ``page.region`` of a Chinese page to what its
    text is written in: the manifest's declaration, else the page's own
    ``lang`` (:attr:`Page.lang_tag`), checked against the characters of its
    blocks (:func:`pipeline.chinese.resolve_script_region`). A page without a
    language in the manifest takes the one its ``lang`` declares. ``chars``:
    the character counts of :func:`page_text`, if the caller has them."""
    tag = page.lang_tag
    if not page.language and tag.language:
        page.language = tag.language
    if page.language != "zh":
        return
    content = char_counts(page_text(page)) if chars is None else chars
    page.script, page.region, warnings = resolve_script_region(content, page.script, page.region, tag, page.source_id)
    page.warnings.extend(warnings)


SCRIPTS = {"zh": "Chinese", "en": "Latin"}
SCRIPT_LETTERS = {
    "Chinese": re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]"),
    "Japanese kana": re.compile(r"[\u3041-\u30fa]"),  # without ・ and ー, which Chinese text uses too
    "Hangul": re.compile(r"[\uac00-\ud7a3]"),
    "Latin": re.compile(r"[A-Za-z]"),
}


def language_warning(page: Page, min_letters: int = 20, *, chars: Mapping[str, int] | None = None) -> str | None:
    """A warning when most letters of the page are not in the script of its
    declared language (a Japanese page declared ``zh``, an English one declared
    ``zh``...), naming the shares and the first block in the other script.
    ``chars``: the character counts of :func:`page_text`, if the caller has them."""
    expected = SCRIPTS.get(page.language)
    if expected is None:
        return None
    chars = char_counts(page_text(page)) if chars is None else chars
    counts = letter_counts(chars)
    total = sum(counts.values())
    if total < min_letters or max(counts, key=counts.get) == expected:
        return None
    first_other = next((block for block in page.blocks if _letters_mostly_not(block, expected)), None)
    shares = ", ".join(f"{n / total:.0%} {script}" for script, n in sorted(counts.items(), key=lambda kv: -kv[1]) if n)
    where = f"block {first_other.index} (section {' / '.join(first_other.section) or '-'})" if first_other else "-"
    return (f"{page.source_id}: declared language {page.language!r} but most letters are not {expected} "
            f"({shares}); first such block: {where}")


def letter_counts(chars: Mapping[str, int]) -> dict[str, int]:
    """Letters per script of :data:`SCRIPT_LETTERS`, from character counts
    (character -> occurrences): each distinct character is matched once,
    by one ``findall`` per script over them all."""
    distinct = "".join(chars)
    return {script: sum(map(chars.__getitem__, pattern.findall(distinct)))
            for script, pattern in SCRIPT_LETTERS.items()}


def _letters_mostly_not(block: Block, expected: str) -> bool:
    """Whether ``block`` has letters and most are not in the ``expected`` script."""
    counts = letter_counts(char_counts("\n".join(line.text for line in block.lines)))
    return any(counts.values()) and max(counts, key=counts.get) != expected
