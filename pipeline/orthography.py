"""How the pages write text: letters, CJK ranges, sentence ends, quote marks.

The one place for the character classes and quote patterns the stages
share (segment, annotate, the statement readers, chinese): compiled
patterns and two small helpers, no state. Takes and returns plain strings.
"""

from __future__ import annotations

import re
from functools import lru_cache

LETTER = re.compile(r"[^\W\d_]")  # a letter of any script
# Kana and the CJK ideographs (extension A and the unified block).
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")

# A sentence's end in any of the corpus' languages: a Chinese or Latin stop, or a Latin full stop
# before a space or the end (not 1.5 or e.g).
SENTENCE_END = re.compile(r"[。！？!?；;]|\.(?:\s|$)")
ZH_SENTENCE_ENDS = "。！？"
# The characters a Chinese sentence split looks at: brackets, quotes, sentence ends.
ZH_SENTENCE_MARKS = re.compile(r"[（()）。！？「」『』]")
# Between two English sentences: a stop (and a closing quote or bracket), spaces, a capital or an opener.
EN_SENTENCE_END = re.compile(r"(?<=[.!?])[\"”')\]]?\s+(?=[A-Z\"“(\[])")

CARD_QUOTE = re.compile(r"「([^「」]{1,80})」")  # a card's (or archetype's, term's) name as rulings quote it
QUOTED_NAME = re.compile(r"「[^「」]*」")  # a 「」 quote of any length, its marks included
EXEMPLAR = re.compile(r"「[^「」]{1,80}」等")  # 「神影依·米德拉什」等效果: cards named as examples of a kind
OTHER_QUOTES = re.compile(r"“([^“”]{1,60})”|《([^《》]{1,60})》")
# Quotes that name game terms but never cards (『』 quotes effect text and information: 『攻击过』).
TERM_QUOTES = re.compile(r"『([^『』]{1,60})』|\"([^\"\n]{1,60})\"")
# A bracketed part of a title: names in 「」『』【】《》, notes in parentheses.
BRACKETED = re.compile(r"「[^「」]*」|『[^『』]*』|【[^【】]*】|《[^《》]*》|（[^（）]*）|\([^()]*\)")
PARENTHESIZED = re.compile(r"（[^（）]*）|\([^()]*\)")


def alternation(words: list[str]) -> str:
    """A regular expression matching any of ``words`` as written, longest first."""
    return "|".join(map(re.escape, sorted(words, key=len, reverse=True)))


def quote_ranges(text: str, opener: str, closer: str) -> list[tuple[int, int]]:
    """The outermost ``opener``...``closer`` ranges of ``text`` (nested quotes
    inside them, an unmatched closer ignored); only the quote marks are visited."""
    if opener not in text:
        return []
    ranges, stack = [], []
    for m in _quote_marks(opener, closer).finditer(text):
        if m.group() == opener:
            stack.append(m.start())
        elif stack:
            start = stack.pop()
            if not stack:
                ranges.append((start, m.end()))
    return ranges


@lru_cache(maxsize=8)
def _quote_marks(opener: str, closer: str) -> re.Pattern:
    return re.compile(f"[{re.escape(opener)}{re.escape(closer)}]")
