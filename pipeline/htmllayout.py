"""HTML markup that lays out a page rather than holding rulings, for the block walk.

* :func:`layout_row`: a table row (lxml element) that lays out the page
  (its cells hold blocks, read as blocks) rather than holding a record.
* :func:`paragraph_heading`: the text of a paragraph that is a heading in
  all but its tag (Sphinx's ``rubric``, a bold card name alone), else None.

Pure functions of lxml elements; raise nothing.
"""

from __future__ import annotations

import re
from itertools import islice

from .normalize import CELL_TAGS, HEADINGS


# Below any <h1>-<h6>: a paragraph heading nests under the page's last real heading.
PARAGRAPH_HEADING_LEVEL = 7
# A card name alone, in bold (a card page's sections): 「死者苏生」, 「死者苏生」：
CARD_NAME_ONLY = re.compile(r"「[^「」]{1,80}」[：:]?")
_LAYOUT_BLOCKS = frozenset({"p", "div", "ul", "ol", "table", "pre", "blockquote", "dl", "section", "article",
                            *HEADINGS})


def paragraph_heading(el, classes: frozenset[str], text: str) -> str | None:
    """The text of a paragraph that is a heading in all but its tag, or None:
    Sphinx's ``<p class="rubric">``, or a ``<p>`` that is wholly one
    ``<strong>`` / ``<b>`` holding a card name alone (``<p><b>「死者苏生」</b></p>``:
    the rulings after it are that card's). Any other bold paragraph is a
    ruling (``<p><b>「A」可以对应「B」发动</b></p>``, ``<p><strong>答：可以</strong></p>``)."""
    if el.tag != "p" or not text:
        return None
    if "rubric" in classes:
        return text
    if len(el) != 1 or el[0].tag not in ("strong", "b") or (el.text or "").strip() or (el[0].tail or "").strip():
        return None
    return text if CARD_NAME_ONLY.fullmatch(text) else None


def layout_row(tr, has_heading=None) -> bool:
    """Whether table row ``tr`` lays out the page rather than holding a
    record: in a table of one or two rows (``thead``, ``tbody`` counted
    together) without header cells (a data table has a row a record, and
    most have headers), a cell with a heading, or with three or more block
    elements, or the table's only cell with two or more."""
    table = tr.getparent()
    if table is not None and table.tag in _ROW_GROUPS:
        table = table.getparent()
    # its own rows (not those of a table nested in a cell), three at most: a table of 100,000
    # rows must not cost 100,000 squared
    rows = list(islice(_own_rows(table), 3)) if table is not None else [tr]
    if len(rows) > 2 or any(c.tag == "th" for r in rows for c in r):
        return False
    cells = [c for c in tr if c.tag in CELL_TAGS]
    for cell in cells:
        blocks = sum(1 for c in cell if c.tag in _LAYOUT_BLOCKS)
        if blocks >= 3 or (has_heading(cell) if has_heading else
                           any(isinstance(d.tag, str) and d.tag in HEADINGS for d in cell.iterdescendants())):
            return True
        if blocks >= 2 and len(cells) == 1 and len(rows) == 1:
            return True
    return False


_ROW_GROUPS = ("thead", "tbody", "tfoot")


def _own_rows(table):
    """The rows of ``table`` itself, in its ``thead``, ``tbody`` and ``tfoot`` too."""
    for child in table:
        if child.tag == "tr":
            yield child
        elif child.tag in _ROW_GROUPS:
            yield from (row for row in child if row.tag == "tr")
