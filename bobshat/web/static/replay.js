// The replay page: the server checks the record like `bobshat replay` and sends every frame;
// this page only steps through them (buttons, the slider, or the arrow keys; Page Up/Down by hand).
import { api, drawTable, el, showError, summaryBlock } from "./common.js";

const params = new URLSearchParams(location.search);
let data = null;
let at = 0;

function lastSummaryUpTo(i) {
  // The latest hand's scoring at or before frame i.
  for (let k = i; k >= 0; k--) {
    if (data.frames[k].summary) return { lines: data.frames[k].summary, rows: data.frames[k].scoring, number: data.frames[k].hand.number, now: k === i };
  }
  return null;
}

function handOf(i) {
  let h = 0;
  for (let k = 0; k < data.hand_list.length; k++) if (data.hand_list[k].frame <= i) h = k;
  return h;
}

function show(i) {
  at = Math.max(0, Math.min(data.frames.length - 1, i));
  const frame = data.frames[at];
  drawTable(document.getElementById("table"), frame, data.deck, { title: data.title });
  document.getElementById("lines").replaceChildren(...frame.lines.map((l) => el("li", {}, l)));
  document.querySelector("section.step").hidden = !frame.lines.length;
  const box = document.getElementById("summary-box");
  const s = lastSummaryUpTo(at);
  box.replaceChildren(
    s ? summaryBlock(`Hand ${s.number} scoring${s.now ? "" : " (the last hand scored)"}`, s.lines, s.rows) : el("p", { class: "muted" }, "Each hand's scoring shows at its end."),
  );
  const h = handOf(at);
  document.getElementById("where").textContent = `Move ${at} of ${data.frames.length - 1} \u00b7 hand entry ${h + 1} of ${data.hand_list.length}`;
  document.getElementById("scrub").value = String(at);
  for (const [k, item] of [...document.getElementById("hands").children].entries()) item.classList.toggle("current", k === h);
  document.getElementById("prev").disabled = document.getElementById("first").disabled = at === 0;
  document.getElementById("next").disabled = document.getElementById("last").disabled = at === data.frames.length - 1;
}

function step(delta) {
  show(at + delta);
}

function hand(delta) {
  const h = handOf(at);
  const target = delta < 0 && data.hand_list[h].frame < at ? h : h + delta;
  if (target < 0) show(0);
  else if (target >= data.hand_list.length) show(data.frames.length - 1);
  else show(data.hand_list[target].frame);
}

async function main() {
  const q = new URLSearchParams();
  for (const key of ["file", "record", "upload", "game"]) if (params.has(key)) q.set(key, params.get(key));
  try {
    data = await api("GET", `/api/replay?${q}`);
  } catch (err) {
    document.getElementById("status").textContent = "The record could not be opened.";
    showError(err.message);
    return;
  }
  const where = params.has("file") ? `${params.get("file")}, record ${params.get("record") || 0}` : params.has("upload") ? `upload, record ${params.get("record") || 0}` : "the game just played";
  if (!data.ok) {
    document.getElementById("status").textContent = `${where}: the record does not replay (${data.n_faults} fault(s)), as bobshat replay would say:`;
    const faults = document.getElementById("faults");
    faults.hidden = false;
    faults.replaceChildren(el("ul", {}, data.faults.map((f) => el("li", {}, f))));
    return;
  }
  document.title = `bobshat: replay of ${data.title}`;
  document.getElementById("status").textContent = `${data.title}, ${where}: ${data.agents.join(", ")}; final totals ${data.totals.join(", ")} (seed ${data.seed}). The record replays without a fault.`;
  document.getElementById("player").hidden = false;
  document.getElementById("hands").replaceChildren(
    ...data.hand_list.map((h) => el("li", {}, el("button", { type: "button", class: "link", onclick: () => show(h.frame) }, `Hand ${h.number}${h.renege ? " (renege: dealt again)" : ""}`))),
  );
  const scrub = document.getElementById("scrub");
  scrub.max = String(data.frames.length - 1);
  scrub.addEventListener("input", () => show(Number(scrub.value)));
  document.getElementById("first").addEventListener("click", () => show(0));
  document.getElementById("last").addEventListener("click", () => show(data.frames.length - 1));
  document.getElementById("prev").addEventListener("click", () => step(-1));
  document.getElementById("next").addEventListener("click", () => step(1));
  document.getElementById("prev-hand").addEventListener("click", () => hand(-1));
  document.getElementById("next-hand").addEventListener("click", () => hand(1));
  document.addEventListener("keydown", (event) => {
    if (event.target instanceof HTMLInputElement && event.target.type !== "range") return;
    const keys = { ArrowRight: () => step(1), ArrowLeft: () => step(-1), PageDown: () => hand(1), PageUp: () => hand(-1), Home: () => show(0), End: () => show(data.frames.length - 1) };
    if (keys[event.key] && event.target !== scrub) {
      event.preventDefault();
      keys[event.key]();
    }
  });
  show(0);
}

main();
