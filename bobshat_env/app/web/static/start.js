// The start page: the games, options and bots come from /api/meta; Start opens /play with them as parameters.
import { api, el, showError } from "./common.js";

const form = document.getElementById("start");
const gameBox = document.getElementById("game");
const playersBox = document.getElementById("players");
const seatBox = document.getElementById("seat");
let meta = null;

const current = () => meta.games.find((g) => g.name === gameBox.value);

function drawOptions() {
  const g = current();
  const players = Number(playersBox.value);
  const box = document.getElementById("options");
  box.replaceChildren(
    ...g.options.map((o) => {
      const id = `opt-${o.name}`;
      if (o.kind === "bool") {
        return el("label", { class: "check" }, el("input", { type: "checkbox", id, name: o.name, value: "1", checked: o.default }), o.label);
      }
      if (o.kind === "choice") {
        return el("label", {}, o.label, " ", el("select", { id, name: o.name }, o.choices.map((c) => el("option", { value: c, selected: c === o.default }, c))));
      }
      const min = o.name === "first_dealer" ? -1 : o.name === "hand_size_base" ? 0 : 1;
      const max = o.name === "first_dealer" ? players - 1 : null;
      return el("label", {}, o.label, " ", el("input", { type: "number", id, name: o.name, min, max, placeholder: o.default === null ? "default" : String(o.default), value: o.name === "first_dealer" ? "0" : "" }));
    }),
  );
  seatBox.replaceChildren(
    ...Array.from({ length: players }, (_, p) => el("option", { value: String(p) }, `player_${p}`)),
    el("option", { value: "none" }, "none: watch the bots"),
  );
  drawBots();
}

function drawBots() {
  const g = current();
  const players = Number(playersBox.value);
  const offered = g.agents[String(players)] || [];
  const list = el("datalist", { id: "agent-list" }, offered.map((a) => el("option", { value: a.spec }, a.label)));
  const seat = seatBox.value;
  const best = offered.some((a) => a.spec === "strong") ? "strong" : "random";
  const rows = [];
  for (let p = 0; p < players; p++) {
    if (String(p) === seat) continue;
    rows.push(el("label", {}, `player_${p}`, " ", el("input", { class: "bot", list: "agent-list", value: best, dataset: { seat: p }, "aria-label": `bot for player_${p}` })));
  }
  document.getElementById("bots").replaceChildren(list, ...rows);
  updateLink();
}

function query() {
  const q = new URLSearchParams();
  q.set("game", gameBox.value);
  q.set("players", playersBox.value);
  for (const o of current().options) {
    const input = document.getElementById(`opt-${o.name}`);
    if (!input) continue; // (an "input" event comes before the new game's options are drawn)
    if (o.kind === "bool") {
      if (input.checked) q.set(o.name, "1");
    } else if (input.value !== "" && input.value !== String(o.default)) {
      q.set(o.name, input.value);
    }
  }
  const bots = [...document.querySelectorAll("input.bot")].map((i) => i.value.trim() || "random");
  q.set(seatBox.value === "none" ? "agents" : "opponents", bots.join(","));
  q.set("seat", seatBox.value);
  const seed = document.getElementById("seed").value.trim();
  if (seed) q.set("seed", seed);
  q.set("speed", document.getElementById("speed").value);
  return q;
}

function updateLink() {
  const url = `/play?${query()}`;
  const link = document.getElementById("link");
  link.href = url;
  link.textContent = `${location.origin}${url}`;
}

async function main() {
  try {
    meta = await api("GET", "/api/meta");
  } catch (err) {
    showError(err.message);
    return;
  }
  gameBox.replaceChildren(...meta.games.map((g) => el("option", { value: g.name }, g.title)));
  const drawPlayers = () => {
    const g = current();
    playersBox.replaceChildren(...g.players.map((n) => el("option", { value: String(n), selected: n === g.default_players }, String(n))));
    drawOptions();
  };
  gameBox.addEventListener("change", drawPlayers);
  playersBox.addEventListener("change", drawOptions);
  seatBox.addEventListener("change", drawBots);
  form.addEventListener("input", updateLink);
  form.addEventListener("change", updateLink);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    location.href = `/play?${query()}`;
  });
  drawPlayers();
}

main();
