// Client-side search of the rulings report over window.RULINGS_SEARCH
// (assets/search-index.js). Results are built with textContent only:
// names and ruling texts come from scraped pages.
(function () {
  "use strict";
  var index = window.RULINGS_SEARCH || { cards: [], rulings: [] };
  var input = document.getElementById("q");
  var status = document.getElementById("search-status");
  var cardList = document.getElementById("card-results");
  var rulingList = document.getElementById("ruling-results");
  var LIMIT = 50;

  function fold(text) {
    return text.normalize("NFKC").toLowerCase().replace(/\s+/g, "");
  }
  var cards = index.cards.map(function (c) {
    return { passcode: c[0], names: c[1], keys: c[1].map(fold) };
  });
  var rulings = index.rulings.map(function (r) {
    return { id: r[0], href: r[1], text: r[2], key: fold(r[2]) };
  });

  function link(href, text) {
    var a = document.createElement("a");
    a.href = href;
    a.textContent = text;
    return a;
  }

  function item(list, node, extra) {
    var li = document.createElement("li");
    li.appendChild(node);
    if (extra) {
      li.appendChild(document.createTextNode(" " + extra));
    }
    list.appendChild(li);
  }

  function run() {
    var q = fold(input.value || "");
    cardList.textContent = "";
    rulingList.textContent = "";
    if (!q) {
      status.textContent = "";
      return;
    }
    var foundCards = cards.filter(function (c) {
      return c.keys.some(function (k) { return k.indexOf(q) !== -1; });
    });
    foundCards.sort(function (a, b) {
      var ea = a.keys.indexOf(q) !== -1 ? 0 : 1, eb = b.keys.indexOf(q) !== -1 ? 0 : 1;
      return ea - eb || a.passcode - b.passcode;
    });
    var foundRulings = rulings.filter(function (r) { return r.key.indexOf(q) !== -1; });
    foundCards.slice(0, LIMIT).forEach(function (c) {
      item(cardList, link("cards/" + c.passcode + ".html", c.names.join(" / ")), "(" + c.passcode + ")");
    });
    foundRulings.slice(0, LIMIT).forEach(function (r) {
      item(rulingList, link(r.href, r.text), "");
    });
    status.textContent = foundCards.length + " cards, " + foundRulings.length + " rulings" +
      (foundCards.length > LIMIT || foundRulings.length > LIMIT ? " (first " + LIMIT + " of each shown)" : "");
  }

  input.addEventListener("input", run);
  var initial = new URLSearchParams(window.location.search).get("q");
  if (initial) {
    input.value = initial;
  }
  run();
}());
