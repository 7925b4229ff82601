// The play page: starts (or resumes) a game from the URL, draws the table the server sends,
// lets the bots move one at a time at the chosen speed, and posts the human's clicks.
import { api, card, drawTable, el, showError, summaryBlock } from "./common.js";

const params = new URLSearchParams(location.search);
const speedBox = document.getElementById("speed");
let view = null;
let logSize = 0;
let busy = false;
let stopped = false;

function initialSpeed() {
  const fromUrl = params.get("speed");
  if (fromUrl !== null && /^\d{1,5}$/.test(fromUrl)) return fromUrl;
  return localStorage.getItem("bobshat-speed") || "500";
}
(function setSpeed() {
  const wanted = initialSpeed();
  if (![...speedBox.options].some((o) => o.value === wanted)) speedBox.append(el("option", { value: wanted }, `${wanted} ms`));
  speedBox.value = wanted;
  speedBox.addEventListener("change", () => {
    localStorage.setItem("bobshat-speed", speedBox.value);
    run();
  });
})();

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function status(text) {
  document.getElementById("status").textContent = text;
}

function appendLog(entries) {
  const log = document.getElementById("log");
  for (const entry of entries) {
    if (entry.n < logSize) continue;
    if (entry.kind === "summary") {
      // The scoring is in its own panel; the log keeps it folded.
      log.append(el("li", { class: "log-summary" }, el("details", {}, el("summary", {}, "Hand scored: the scoring"), el("pre", {}, entry.lines.join("\n")))));
    } else {
      for (const line of entry.lines) log.append(el("li", { class: `log-${entry.kind}` }, line));
    }
    logSize = entry.n + 1;
  }
  log.scrollTop = log.scrollHeight;
}

function drawYou() {
  const you = document.getElementById("you");
  if (view.seat === null || view.done) {
    you.hidden = true;
    return;
  }
  you.hidden = false;
  const mine = view.seats[view.seat];
  const playable = new Map(view.moves.filter((m) => m.card).map((m) => [m.name, m]));
  document.getElementById("question").textContent = view.your_turn ? view.question : `Waiting for ${view.seats[view.to_act].label}...`;
  const moves = document.getElementById("moves");
  moves.replaceChildren(
    ...view.moves.filter((m) => !m.card).map((m) => el("button", { type: "button", class: "move", onclick: () => play(m.name) }, m.name)),
  );
  const note = document.getElementById("note");
  note.hidden = !view.moves_note;
  note.textContent = view.moves_note ? `Not offered: ${view.moves_note}.` : "";
  const reneges = document.getElementById("reneges");
  reneges.hidden = !view.reneges.length;
  reneges.replaceChildren(
    el("span", {}, "Renege (breaks follow suit: a penalty, and the hand is dealt again): "),
    ...view.reneges.map((m) =>
      el("button", { type: "button", class: "move renege", "aria-label": `renege ${m.name}`, onclick: () => play(m.name, true) }, m.name),
    ),
  );
  const hand = document.getElementById("hand");
  hand.replaceChildren(
    ...mine.cards.map((c) =>
      playable.has(c) ? card(c, view.deck, { onclick: () => play(c) }) : card(c, view.deck, { dim: view.your_turn && playable.size > 0 }),
    ),
  );
}

function drawResult() {
  const box = document.getElementById("result");
  if (!view.result) {
    box.hidden = true;
    return;
  }
  const r = view.result;
  const order = view.seats.map((s) => s.seat).sort((a, b) => r.totals[b] - r.totals[a]);
  box.hidden = false;
  box.replaceChildren(
    el("h2", {}, "Game over"),
    el("p", { class: "verdict" }, r.verdict),
    el(
      "table",
      { "aria-label": "Final totals", class: "totals" },
      el("thead", {}, el("tr", {}, el("th", {}, "Seat"), el("th", {}, "Agent"), el("th", {}, "Total"))),
      el(
        "tbody",
        {},
        order.map((p) =>
          el(
            "tr",
            { dataset: { seat: p }, class: r.winners.includes(p) ? "winner" : "" },
            el("th", {}, view.seats[p].label),
            el("td", {}, view.seats[p].agent),
            el("td", { class: "total" }, String(r.totals[p])),
          ),
        ),
      ),
    ),
    r.saved
      ? el("p", { class: "saved" }, `Saved to ${r.saved.file} in the records folder.`)
      : el("p", { class: "error" }, r.save_error || "Not saved."),
    el(
      "p",
      { class: "links" },
      el("a", { href: `/replay?game=${encodeURIComponent(view.id)}` }, "Replay this game"),
      el("a", { href: `/api/games/${encodeURIComponent(view.id)}/record`, download: "" }, "Download the record"),
      el("a", { href: location.pathname + location.search.replace(/([?&])seed=\d+/, "$1").replace(/[?&]$/, "") }, "Play again (new deal)"),
      el("a", { href: "/records" }, "All records"),
    ),
  );
}

function draw() {
  // What the page shows now, for scripts and tests that drive it: the turn and whose move it is.
  document.body.dataset.turn = String(view.turn);
  document.body.dataset.state = view.done ? "done" : view.your_turn ? "your-turn" : "waiting";
  drawTable(document.getElementById("table"), view, view.deck, { title: view.title });
  drawYou();
  drawResult();
  appendLog(view.log);
  const summaries = document.getElementById("summaries");
  if (view.summaries.length) {
    // the latest hand open, the earlier ones folded
    const [latest, ...earlier] = [...view.summaries].reverse();
    summaries.replaceChildren(
      summaryBlock(`Hand ${latest.hand}`, latest.lines, latest.rows),
      ...earlier.map((s) => el("details", {}, el("summary", {}, `Hand ${s.hand}`), summaryBlock(`Hand ${s.hand}`, s.lines, s.rows))),
    );
  }
  const who = view.seat === null ? "Watching bots" : `You are ${view.seats[view.seat].label}`;
  if (view.done) status(`${who}. Game over: ${view.result.verdict} (seed ${view.seed})`);
  else if (view.your_turn) status(`${who}. Your turn: ${view.question}.`);
  else status(`${who}. ${view.seats[view.to_act].label} (${view.seats[view.to_act].agent}) to act. Seed ${view.seed}.`);
}

async function play(name, renege = false) {
  if (busy || !view || !view.your_turn) return;
  busy = true;
  try {
    view = await api("POST", `/api/games/${view.id}/move`, { move: name, turn: view.turn, renege, since: logSize });
    showError("");
    draw();
  } catch (err) {
    showError(err.message);
  } finally {
    busy = false;
  }
  run();
}

// Bots move one at a time, `speed` ms apart (all at once at speed 0), until it is the human's turn.
let running = false;
async function run() {
  if (running || stopped) return;
  running = true;
  try {
    while (view && !view.done && !view.your_turn && !stopped) {
      const speed = Number(speedBox.value);
      if (speed > 0) await sleep(speed);
      if (stopped) break;
      view = await api("POST", `/api/games/${view.id}/advance`, { steps: speed > 0 ? 1 : 1000, since: logSize });
      draw();
    }
  } catch (err) {
    showError(err.message);
  } finally {
    running = false;
  }
}

document.getElementById("leave").addEventListener("click", async () => {
  if (!view) return;
  if (!view.done && !confirm("Leave this game? It will not be saved.")) return;
  stopped = true;
  try {
    await api("DELETE", `/api/games/${view.id}`);
  } catch (err) {
    /* already gone */
  }
  location.href = "/";
});

// The game a link from another site asks for, and a button to start it: the server starts nothing on its own.
function confirmLink(body) {
  document.body.dataset.state = "confirm";
  status("This game was opened from a link on another site. Check it, then start it.");
  const box = document.getElementById("confirm");
  box.hidden = false;
  box.replaceChildren(
    el("h2", {}, "Start this game?"),
    el(
      "dl",
      { class: "link-params" },
      Object.entries(body).map(([key, value]) => el("div", {}, el("dt", {}, key), el("dd", {}, value))),
    ),
  );
  return new Promise((resolve) => {
    const go = el("button", { type: "button", class: "primary", onclick: () => {
      box.hidden = true;
      delete document.body.dataset.state;
      status("Starting the game...");
      resolve();
    } }, "Start this game");
    box.append(go, " ", el("a", { href: "/" }, "Choose another game"));
  });
}

// A reload resumes the game named in the address's #game=ID; otherwise the URL's parameters start a new one.
async function start() {
  const resume = /^#game=([\w-]+)$/.exec(location.hash);
  if (resume) {
    try {
      view = await api("GET", `/api/games/${resume[1]}`);
    } catch (err) {
      view = null;
    }
  }
  if (!view) {
    const body = {};
    for (const [key, value] of params) if (key !== "speed") body[key] = value;
    // Opened from a link on another site: nothing starts until the visitor has seen what the link asks for.
    if (document.body.dataset.confirm === "link") await confirmLink(body);
    try {
      view = await api("POST", "/api/games", body);
    } catch (err) {
      status("The game could not start.");
      showError(err.message);
      return;
    }
    history.replaceState(null, "", `${location.pathname}${location.search}#game=${view.id}`);
  }
  document.title = `bobshat: ${view.title}`;
  draw();
  run();
}

start();
