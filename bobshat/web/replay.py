"""Replays for ``bobshat serve``: records from the records folder or an upload, stepped card by card.

A record is checked exactly as ``bobshat replay`` checks it
(:func:`bobshat_env.records.replay_steps` runs the same replay and keeps
every state it passes through), and only a valid record is turned into
frames: one per deal and one per action, each the whole table face up (every
hand, the bids, the trick, the running scores) with the step told as the
terminal game tells it, and at each hand's end the scoring bid by bid.

Files are read only from the records folder, by a plain name
(:func:`record_file`): no path, no ``..``, no link that leads out of it.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from pathlib import Path
from typing import Any

from bobshat_env.core.config import ConfigError
from bobshat_env.games import make_game
from bobshat_env.records import RecordLineTooLong, read_records, replay_report, replay_steps
from bobshat_env.text import tell_step

from .session import WebError, deck_faces, scoring_rows, table_view, trick_of

MAX_FILE_BYTES = 64 * 1024 * 1024  # a records file listed or replayed from the folder; bigger: `bobshat replay`
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,200}\.jsonl")


def record_file(root: Path, name: Any) -> Path:
    """The records file ``name`` inside ``root``; WebError for anything else (paths, ``..``, links out)."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise WebError(400, f"file must be the name of a .jsonl file in the records folder, got {name!r}")
    base = root.resolve()
    path = (root / name).resolve()
    if path.parent != base:
        raise WebError(400, f"{name!r} leads out of the records folder")
    if not path.is_file():
        raise WebError(404, f"no records file {name!r} in the records folder")
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise WebError(413, f"{name} has {size:,} bytes, more than {MAX_FILE_BYTES:,}: check it with bobshat replay")
    return path


def summarize(
    source: Path | bytes, cache: dict[bytes, dict] | None = None, budget: int | None = None
) -> list[dict[str, Any]]:
    """One line per record of a records file (a path or its bytes), checked like ``bobshat replay``.

    cache: summaries by record content, so a file that grew by one game
    replays one record, not all (a record is replayed in full to be checked).
    budget: bytes of JSON the summaries may take (an upload's listing):
    past it, one last item says how many records were left unchecked, so a
    file of two-byte lines (``{}``) costs no more than a file of real records.
    """
    out: list[dict[str, Any]] = []
    try:
        _summarize(source, cache, budget, out)
    except RecordLineTooLong as err:  # a line no record could fill: said as the last item, the rest unread
        out.append({"index": len(out), "line": err.line, "ok": False, "faults": [str(err)]})
    return out


def _summarize(source: Path | bytes, cache: dict[bytes, dict] | None, budget: int | None, out: list) -> None:
    """:func:`summarize`'s items, appended to ``out`` as the records are read."""
    spent = 0
    for index, (line, record, error) in enumerate(read_records(source)):
        if budget is not None and spent > budget:
            out.append(_left_unchecked(index, line, source))
            break
        item: dict[str, Any] = {"index": index, "line": line}
        if error is not None:
            item.update(ok=False, faults=[error])
            out.append(item)
            spent += len(error) + 40
            continue
        key = hashlib.sha256(json.dumps(record, sort_keys=True, default=str).encode()).digest()
        known = cache.get(key) if cache is not None else None
        if known is None:
            report = replay_report(record)
            known = {
                "ok": report.ok,
                "faults": [str(f)[:500] for f in report.faults[:20]],
                "n_faults": len(report.faults),
                "game": report.game,
                "players": report.players,
                "hands": report.hands,
                "agents": report.agents,
                "totals": report.totals,
                "seed": str(record.get("seed")),
            }
            if cache is not None:
                if len(cache) >= 50_000:
                    cache.clear()
                cache[key] = known
        item.update(known)
        out.append(item)
        if budget is not None:
            spent += len(json.dumps(item, default=str))


def _left_unchecked(index: int, line: int, source: Path | bytes) -> dict[str, Any]:
    """The last item of a listing cut at its budget: from which line on records were not checked."""
    total = source.count(b"\n") + 1 if isinstance(source, bytes) else None
    rest = f"lines {line} to {total}" if total is not None and total > line else f"line {line} on"
    return {
        "index": index,
        "line": line,
        "ok": False,
        "unchecked": True,
        "faults": [f"{rest} not checked: the listing is over its size limit; check the file with bobshat replay"],
    }


def frames(record: dict) -> dict[str, Any]:
    """The replay of one record: ``ok`` and its faults, and for a valid record every frame of the game."""
    report, steps = replay_steps(record)
    head: dict[str, Any] = {
        "ok": report.ok,
        "faults": [str(f) for f in report.faults[:50]],
        "n_faults": len(report.faults),
        "game": report.game,
        "players": report.players,
        "agents": report.agents,
        "totals": report.totals,
        # a 64-bit key: as a JSON number, JavaScript would round it
        "seed": str(record.get("seed")) if isinstance(record, dict) else None,
    }
    if not report.ok:
        return head
    try:
        game = make_game(record["game"], **record["config"])
    except (ConfigError, TypeError) as err:  # replay accepted it, so this would be a bug: say so, do not crash
        head.update(ok=False, faults=[f"the record's config cannot be played here: {err}"])
        return head
    text = game.play_text()
    names = list(report.agents or [f"player_{p}" for p in range(game.players)])
    out: list[dict[str, Any]] = []
    hands: list[dict[str, Any]] = []
    last_trick = None
    # The replay deals each hand entry afresh (scores from 0): the running totals carry the hands before it.
    carried = [0] * game.players
    previous = None
    for step in steps:
        if step.action is None:  # a hand entry's deal
            if previous is not None:
                carried = [c + int(x) for c, x in zip(carried, previous.scores[0])]
            hands.append({"entry": step.entry, "number": int(step.after.hand_no[0]) + 1, "frame": len(out)})
            lines = [text.hand_header(step.after, -1)]
            summary, scoring = None, None
        else:
            story = tell_step(game, text, step.before, step.action, step.result, step.after, -1)
            if bool(step.result.trick_done[0]):
                hand, number = int(step.before.hand_no[0]) + 1, int(step.before.tricks_done[0]) + 1
                last_trick = trick_of(game, step.result, hand, number, story.events[-1])
            lines, summary, scoring = story.events, story.summary or None, None
            if summary:
                scoring = scoring_rows(game, text, step.before, step.action, summary, -1)
                for row, before in zip(scoring, carried):
                    row["total"] += before
            if step.action < game.deck.n_cards:  # the terminal tells cards with their trick; a replay goes card by card
                seat = int(step.before.cur[0])
                lines = [f"player_{seat} plays {text.move_name(step.action)}.", *lines]
            if bool(step.result.renege[0]):
                hands[-1]["renege"] = True
        ended = step.result is not None and (bool(step.result.hand_done[0]) or bool(step.result.renege[0]))
        # a hand's last card: the core has moved on to the next hand's number and dealer; show the hand just played
        view = table_view(game, text, step.after, names, None, last_trick, dealt=step.before if ended else None)
        for seat, before in zip(view["seats"], carried):
            seat["total"] += before
        view.update(entry=step.entry, lines=lines, summary=summary, scoring=scoring)
        previous = step.after
        out.append(view)
    head.update(title=game.title, hand_list=hands, frames=out, deck=deck_faces(game, text))
    return head


class ReplaySources:
    """Records the replay page may open: the records folder's files, and uploads held in memory.

    Listing a folder file replays every record in it once; the result is kept
    until the file changes (size or modification time).
    """

    def __init__(self, records_dir: Path, max_upload: int, max_uploads: int = 20) -> None:
        self.root = Path(records_dir)
        self.max_upload = int(max_upload)
        self.max_uploads = int(max_uploads)
        self._uploads: dict[str, dict[str, Any]] = {}
        self._cache: dict[str, tuple[tuple[int, int], list[dict]]] = {}
        self._records: dict[bytes, dict] = {}  # summaries by record content (see summarize)
        self._lock = threading.Lock()

    # -- the records folder
    def listing(self) -> list[dict[str, Any]]:
        """Every ``*.jsonl`` in the records folder, newest first, with its records summarized."""
        if not self.root.is_dir():
            return []
        files = []
        for path in self.root.glob("*.jsonl"):
            if not _NAME.fullmatch(path.name):
                continue
            try:
                path = record_file(self.root, path.name)
                stat = path.stat()
            except WebError as err:
                files.append({"file": path.name, "error": err.message, "records": []})
                continue
            key = (stat.st_size, stat.st_mtime_ns)
            with self._lock:
                cached = self._cache.get(path.name)
            if cached is None or cached[0] != key:
                try:
                    cached = (key, summarize(path, self._records))
                except OSError as err:
                    files.append({"file": path.name, "error": f"cannot read it: {err.strerror or err}", "records": []})
                    continue
                with self._lock:
                    self._cache[path.name] = cached
            files.append({"file": path.name, "mtime": stat.st_mtime, "records": cached[1]})
        files.sort(key=lambda f: -f.get("mtime", 0))
        return files

    def from_file(self, name: Any, index: int) -> dict:
        path = record_file(self.root, name)
        try:
            return _nth(read_records(path), index, name)
        except OSError as err:
            raise WebError(404, f"cannot read {name}: {err.strerror or err}") from None

    # -- uploads
    def add_upload(self, name: str, data: bytes, now: float) -> dict[str, Any]:
        """Hold an uploaded records file (already size-checked) and summarize it; the oldest go past the limit."""
        import secrets

        if len(data) > self.max_upload:
            raise WebError(413, f"the upload has {len(data):,} bytes; the limit is {self.max_upload:,}")
        items = summarize(data, budget=max(self.max_upload, 64 * 1024))  # the listing: at most about the upload
        if not items:
            raise WebError(400, f"{name or 'the upload'} holds no game records (one JSON object per line)")
        uid = secrets.token_urlsafe(9)
        entry = {"id": uid, "name": name, "data": data, "records": items, "time": now}
        with self._lock:
            self._uploads[uid] = entry
            while len(self._uploads) > self.max_uploads:
                del self._uploads[min(self._uploads, key=lambda k: self._uploads[k]["time"])]
        return {"id": uid, "name": name, "records": items}

    def from_upload(self, uid: Any, index: int) -> dict:
        with self._lock:
            entry = self._uploads.get(uid) if isinstance(uid, str) else None
        if entry is None:
            raise WebError(404, f"no upload {uid!r}: uploads are kept in memory for a while, upload it again")
        return _nth(read_records(entry["data"]), index, entry["name"] or "the upload")

    def sweep(self, now: float, max_age: float) -> None:
        with self._lock:
            for uid in [u for u, e in self._uploads.items() if now - e["time"] > max_age]:
                del self._uploads[uid]


def _nth(items: Any, index: int, where: str) -> dict:
    try:
        for i, (line, record, error) in enumerate(items):
            if i == index:
                if error is not None:
                    raise WebError(422, f"{where}, line {line}: {error}")
                return record
    except RecordLineTooLong as err:
        raise WebError(422, f"{where}: {err}") from None
    raise WebError(404, f"{where} has no record {index} (records are numbered from 0)")
