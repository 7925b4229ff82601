// The records page: the records folder's files (checked by the server) and uploads.
import { api, el, plural, showError } from "./common.js";

function recordTable(items, link) {
  if (!items.length) return el("p", { class: "muted" }, "no records");
  return el(
    "table",
    { class: "records" },
    el("thead", {}, el("tr", {}, ["#", "Game", "Agents", "Totals", "Check", ""].map((h) => el("th", {}, h)))),
    el(
      "tbody",
      {},
      items.map((r) =>
        el(
          "tr",
          { class: r.ok ? "" : "bad" },
          el("td", {}, String(r.index + 1)), // numbered from 1, as `bobshat replay` numbers them
          el("td", {}, r.game ? `${r.game}, ${r.players} players, ${plural(r.hands, "hand")}` : "\u2013"),
          el("td", {}, (r.agents || []).join(", ")),
          el("td", {}, (r.totals || []).join(", ")),
          el("td", {}, r.ok ? "valid" : el("details", {}, el("summary", {}, `${r.n_faults || r.faults.length} fault(s)`), el("ul", {}, r.faults.map((f) => el("li", {}, f))))),
          el("td", {}, r.ok ? el("a", { href: link(r.index) }, "Replay") : ""),
        ),
      ),
    ),
  );
}

async function load() {
  try {
    const data = await api("GET", "/api/records");
    document.getElementById("folder").textContent = `Folder: ${data.folder}`;
    document.getElementById("limit").textContent = `${(data.max_upload / 1024 / 1024).toFixed(1)} MB`;
    const files = document.getElementById("files");
    if (!data.files.length) {
      files.replaceChildren(el("p", { class: "muted" }, "No records yet: finished games are saved here."));
      return;
    }
    files.replaceChildren(
      ...data.files.map((f) =>
        el(
          "section",
          { class: "file" },
          el("h3", {}, f.file),
          f.error ? el("p", { class: "error" }, f.error) : recordTable([...f.records].reverse(), (i) => `/replay?file=${encodeURIComponent(f.file)}&record=${i}`),
        ),
      ),
    );
  } catch (err) {
    showError(err.message);
  }
}

document.getElementById("upload").addEventListener("click", async () => {
  const input = document.getElementById("file");
  const file = input.files[0];
  if (!file) {
    showError("Choose a file first.");
    return;
  }
  try {
    const response = await fetch(`/api/uploads?name=${encodeURIComponent(file.name)}`, {
      method: "POST",
      headers: { "Content-Type": "application/x-ndjson", "X-Bobshat": "1" },
      body: file,
    });
    const data = await response.json();
    if (!response.ok) throw new Error(data.error || response.statusText);
    showError("");
    document.getElementById("uploaded").replaceChildren(
      el("h3", {}, `${data.name}: ${data.records.filter((r) => r.ok).length} of ${data.records.length} record(s) valid`),
      recordTable(data.records, (i) => `/replay?upload=${encodeURIComponent(data.id)}&record=${i}`),
    );
  } catch (err) {
    showError(err.message);
  }
});

load();
