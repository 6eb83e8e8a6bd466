"""Make the relayout twin of the Taiwan-phrased face-down page (one-off; the
output is checked in): title and sections all <h2>; example labels as
<h2>例：</h2> with <p> examples where the examples end their section; notes as
<h2>備註</h2>/<h2>注意</h2> headings; a navigation line and a footer inside the
content."""
import sys
import lxml.html
from lxml import etree

src, dst = sys.argv[1], sys.argv[2]
tree = lxml.html.parse(src, parser=lxml.html.HTMLParser(encoding="utf-8"))
root = tree.getroot()
article = root.xpath("//article[@role='main']")[0]

def cls(el):
    return (el.get("class") or "").split()

# 1. every heading becomes <h2>, the title too
for h in article.xpath(".//h1|.//h3|.//h4"):
    h.tag = "h2"

# 2. admonitions -> a note heading followed by the admonition's paragraphs
for adm in article.xpath(".//div[contains(concat(' ', normalize-space(@class), ' '), ' admonition ')]"):
    title = adm.xpath("./p[contains(@class, 'admonition-title')]")[0]
    h = etree.Element("h2"); h.text = title.text_content().strip()
    parent = adm.getparent(); i = parent.index(adm)
    parent.insert(i, h)
    for j, child in enumerate([c for c in adm if c is not title], start=1):
        parent.insert(i + j, child)
    parent.remove(adm)

def is_last_in_section(el):
    nxt = el.getnext()
    while nxt is not None and not isinstance(nxt.tag, str):
        nxt = nxt.getnext()
    return nxt is None or nxt.tag in ("h2", "section")

# 3. line-blocks whose examples end their section: label as <h2>, examples as <p>
for lb in article.xpath(".//div[@class='line-block']"):
    lines = [c for c in lb if "line" in cls(c)]
    labels = [i for i, c in enumerate(lines) if c.text_content().strip() in ("例：", "例:")]
    if len(labels) != 1 or lb.getparent().tag == "li" or not is_last_in_section(lb):
        continue
    k = labels[0]
    parent = lb.getparent(); i = parent.index(lb)
    h = etree.Element("h2"); h.text = "例："
    parent.insert(i + 1, h)
    for j, line in enumerate(lines[k + 1:], start=2):
        line.tag = "p"; line.attrib.pop("class", None)
        parent.insert(i + j, line)
    lines[k].getparent().remove(lines[k])
    if k == 0:
        parent.remove(lb)

# 4. chrome written inside the content
nav = etree.Element("p"); nav.text = "首頁 | 卡片查詢 | 規則"
article.insert(0, nav)
foot = etree.Element("p"); foot.text = "本站內容僅供參考，請以官方資料為準。"
article.append(foot)
tree.write(dst, encoding="utf-8", method="html", doctype="<!DOCTYPE html>")
