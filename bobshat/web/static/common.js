// Shared by the pages of `bobshat serve`: API calls and drawing the table the server describes.
// Nothing here knows the rules: legality, scoring and every word about them come from the server.

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export async function api(method, url, body) {
  const options = { method, headers: { "X-Bobshat": "1" } };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const response = await fetch(url, options);
  let data = null;
  try {
    data = await response.json();
  } catch (e) {
    data = null;
  }
  if (!response.ok) {
    throw new ApiError(response.status, (data && data.error) || `${response.status} ${response.statusText}`);
  }
  return data;
}

// el("div", {class: "x", "aria-label": "y", onclick: f}, child, "text", ...): DOM nodes, text always as text.
export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
    else if (key === "class") node.className = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

export function showError(message) {
  const box = document.getElementById("error");
  if (!box) return;
  box.textContent = message || "";
  box.hidden = !message;
}

// A card face from the deck table the server sends (notation -> rank, suit, symbol, hat).
// As a button its accessible name is the card's notation (blue14, QS), which is also what is posted.
export function card(name, deck, { onclick = null, small = false, dim = false } = {}) {
  const face = deck[name] || { name, rank: name, suit: "", symbol: "", hat: false };
  const classes = ["card", `suit-${face.suit}`, small ? "small" : "", dim ? "dim" : "", face.hat ? "hat" : ""];
  const content = [
    el("span", { class: "rank", "aria-hidden": "true" }, face.rank),
    el("span", { class: "pip", "aria-hidden": "true" }, face.symbol || ""),
  ];
  if (face.hat) content.push(el("span", { class: "hat-mark", "aria-hidden": "true", title: "takes Bob's Hat" }));
  if (onclick) {
    return el("button", { class: classes.join(" "), "aria-label": name, title: name, onclick, type: "button" }, content);
  }
  return el("span", { class: classes.join(" "), role: "img", "aria-label": name, title: name }, content);
}

function trickCards(trick, view, deck) {
  return el(
    "div",
    { class: "trick-cards" },
    trick.cards.map((c) =>
      el(
        "figure",
        { class: "played" + (trick.winner === c.seat ? " winner" : "") },
        card(c.card, deck),
        el("figcaption", {}, view.seats[c.seat].label),
      ),
    ),
  );
}

// The table: info line, seats (bid, taken, total, marks, cards or their number), the trick, the last trick.
export function drawTable(root, view, deck, { title = "" } = {}) {
  root.replaceChildren();
  const hand = view.hand;
  root.append(
    el(
      "div",
      { class: "infobar" },
      el("span", { class: "chip strong" }, `${title}${title ? " \u00b7 " : ""}Hand ${hand.number} of ${hand.of}`),
      el("span", { class: "chip" }, `${plural(hand.size, "card")} each`),
      el("span", { class: "chip" }, `Dealer: ${view.seats[hand.dealer].label}`),
      view.info.map(([label, value]) => el("span", { class: "chip" }, `${label}: `, el("b", {}, value))),
      el("span", { class: "chip" }, view.done ? "Game over" : `Phase: ${view.phase}`),
    ),
  );
  // 5 to 7 players sit around the table (the viewer, or seat 0, at the bottom; the trick in the middle)
  const n = view.seats.length;
  const ring = n >= 5 && n <= 7;
  const bottom = view.seat === null || view.seat === undefined ? 0 : view.seat;
  const seats = el("div", { class: ring ? `seats ring ring-${n}` : "seats" });
  for (const s of view.seats) {
    const cards = s.cards
      ? el("div", { class: "seat-cards" }, s.cards.length ? s.cards.map((c) => card(c, deck, { small: true })) : "no cards")
      : el("div", { class: "seat-cards hidden-hand" }, s.count ? el("span", { class: "back", "aria-hidden": "true" }) : null, plural(s.count, "card"));
    seats.append(
      el(
        "section",
        { class: "seat" + (s.to_act ? " to-act" : "") + (ring ? ` at-${(s.seat - bottom + n) % n}` : ""), "aria-label": s.label, dataset: { seat: s.seat } },
        el(
          "header",
          {},
          el("span", { class: "seat-name" }, s.label),
          el("span", { class: "agent" }, s.agent),
          s.dealer ? el("span", { class: "badge" }, "dealer") : null,
          s.to_act ? el("span", { class: "badge act" }, "to act") : null,
          s.marks.map((m) => el("span", { class: "badge mark" }, m)),
        ),
        el(
          "dl",
          { class: "facts" },
          el("div", { class: "fact" }, el("dt", {}, "Bid"), el("dd", { class: "bid" }, s.bid === null ? "\u2013" : s.bid)),
          el("div", { class: "fact" }, el("dt", {}, view.taken_label), el("dd", { class: "taken" }, s.taken)),
          el("div", { class: "fact" }, el("dt", {}, "Total"), el("dd", { class: "total" }, String(s.total))),
        ),
        cards,
      ),
    );
  }
  root.append(seats);
  const centre = el("div", { class: "centre" });
  if (ring) seats.append(centre);
  else root.append(centre);
  const trick = view.trick;
  centre.append(
    el(
      "section",
      { class: "trick", "aria-label": "Current trick" },
      el("h3", {}, view.phase === "play" ? `Trick ${trick.number}, led by ${view.seats[trick.leader].label}` : "Trick"),
      trick.cards.length ? trickCards(trick, view, deck) : el("p", { class: "muted" }, view.phase === "play" ? "no card yet" : "\u2013"),
    ),
  );
  if (view.last_trick) {
    centre.append(
      el(
        "section",
        { class: "trick last", "aria-label": "Last trick" },
        el(
          "h3",
          {},
          view.last_trick.hand === view.hand.number ? "" : `Hand ${view.last_trick.hand}, `,
          `Trick ${view.last_trick.number}: ${view.seats[view.last_trick.winner].label} took it`,
        ),
        trickCards(view.last_trick, view, deck),
      ),
    );
  }
}

// A hand's scoring: a table (seat, bid, taken, made or missed, points, total) with the reasons folded below it.
export function summaryBlock(title, lines, rows) {
  if (!rows) return el("section", { class: "summary" }, el("h3", {}, title), el("pre", {}, lines.join("\n")));
  const signed = (n) => (n > 0 ? `+${n}` : String(n));
  return el(
    "section",
    { class: "summary" },
    el(
      "table",
      { class: "scoring", "aria-label": title },
      el("caption", {}, title, el("span", { class: "muted" }, ` \u00b7 ${lines[0].replace(/^-+ Hand scoring \(?|\)? -+$/g, "")}`)),
      el("thead", {}, el("tr", {}, ["Seat", "Bid", "Taken", "Result", "Points", "Total"].map((h) => el("th", { scope: "col" }, h)))),
      el(
        "tbody",
        {},
        rows.map((r) =>
          el(
            "tr",
            { dataset: { seat: r.seat }, class: r.result === "made" ? "made" : r.result === "missed" ? "missed" : "" },
            el("th", { scope: "row" }, r.label),
            el("td", { class: "bid" }, r.bid === null ? "\u2013" : r.bid.replace(/\+/g, "+\u200b")), // (may wrap after a +)
            el("td", { class: "taken" }, r.taken),
            el("td", { class: "outcome" }, r.result),
            el("td", { class: "points num" }, signed(r.points)),
            el("td", { class: "total num" }, String(r.total)),
          ),
        ),
      ),
    ),
    el("details", {}, el("summary", {}, "Why: bid by bid"), el("pre", {}, lines.slice(1).join("\n"))),
  );
}
