// Client-side search of the rulings report over window.RULINGS_SEARCH
// (assets/search-index.js): rules, cards and rulings. Query and texts are
// folded alike (NFKC, lower case, no spaces, OpenCC's Traditional to
// Simplified characters from the index), so either Chinese script finds
// both. Results are paged and built with textContent only: names and
// ruling texts come from scraped pages.
(function () {
  "use strict";
  var index = window.RULINGS_SEARCH || { fold: ["", ""], cards: [], rulings: [], rules: [] };
  var input = document.getElementById("q");
  var status = document.getElementById("search-status");
  var PAGE = 20;
  var toSimplified = {};
  var from = Array.from(index.fold[0]), to = Array.from(index.fold[1]);
  from.forEach(function (ch, i) { toSimplified[ch] = to[i]; });

  function fold(text) {
    return Array.from(text.normalize("NFKC").toLowerCase().replace(/[\s_\-]+/g, "")).map(function (ch) {
      return toSimplified[ch] || ch;
    }).join("");
  }
  var rules = index.rules.map(function (r) {
    return { href: r[0], verdict: r[1], en: r[2], zh: r[3], key: fold(r[2] + r[3] + r[4]) };
  });
  var cards = index.cards.map(function (c) {
    return { passcode: c[0], names: c[1], keys: c[1].map(fold) };
  });
  var rulings = index.rulings.map(function (r) {
    return { id: r[0], href: r[1], text: r[2], places: r[3], key: fold(r[2]) };
  });

  function link(href, text) {
    var a = document.createElement("a");
    a.href = href;
    a.textContent = text;
    return a;
  }

  function show(listId, found, page, render) {
    var list = document.getElementById(listId);
    var pager = document.querySelector('.pager[data-list="' + listId + '"]');
    var pages = Math.max(1, Math.ceil(found.length / PAGE));
    page = Math.min(Math.max(page, 0), pages - 1);
    list.textContent = "";
    pager.textContent = "";
    list.start = page * PAGE + 1;
    found.slice(page * PAGE, (page + 1) * PAGE).forEach(function (item) {
      var li = document.createElement("li");
      render(li, item);
      list.appendChild(li);
    });
    if (found.length > PAGE) {
      var back = document.createElement("button"), next = document.createElement("button");
      back.type = next.type = "button";
      back.textContent = "Previous";
      next.textContent = "Next";
      back.disabled = page === 0;
      next.disabled = page === pages - 1;
      back.addEventListener("click", function () { show(listId, found, page - 1, render); });
      next.addEventListener("click", function () { show(listId, found, page + 1, render); });
      var where = document.createElement("span");
      where.className = "pager-where";
      where.textContent = (page * PAGE + 1) + "–" + Math.min(found.length, (page + 1) * PAGE) + " of " + found.length;
      pager.appendChild(back);
      pager.appendChild(where);
      pager.appendChild(next);
    }
  }

  function run() {
    var q = fold(input.value || "");
    if (!q) {
      status.textContent = "";
      ["rule-results", "card-results", "ruling-results"].forEach(function (id) { show(id, [], 0, null); });
      return;
    }
    var foundRules = rules.filter(function (r) { return r.key.indexOf(q) !== -1; });
    var foundCards = cards.filter(function (c) {
      return c.keys.some(function (k) { return k.indexOf(q) !== -1; });
    });
    foundCards.sort(function (a, b) {
      var ea = a.keys.indexOf(q) !== -1 ? 0 : 1, eb = b.keys.indexOf(q) !== -1 ? 0 : 1;
      return ea - eb || a.passcode - b.passcode;
    });
    var foundRulings = rulings.filter(function (r) { return r.key.indexOf(q) !== -1; });
    show("rule-results", foundRules, 0, function (li, r) {
      li.appendChild(link(r.href, r.en + " " + r.zh));
    });
    show("card-results", foundCards, 0, function (li, c) {
      li.appendChild(link("cards/" + c.passcode + ".html", c.names.join(" / ")));
      li.appendChild(document.createTextNode(" (" + c.passcode + ")"));
    });
    show("ruling-results", foundRulings, 0, function (li, r) {
      li.appendChild(link(r.href, r.text));
      if (r.places > 1) {
        li.appendChild(document.createTextNode(" (on " + r.places + " pages)"));
      }
    });
    status.textContent = foundRules.length + " rules, " + foundCards.length + " cards, " +
      foundRulings.length + " rulings";
  }

  input.addEventListener("input", run);
  var initial = new URLSearchParams(window.location.search).get("q");
  if (initial) {
    input.value = initial;
  }
  run();
}());
