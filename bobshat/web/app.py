"""The HTTP side of ``bobshat serve``: a Starlette app (served by uvicorn) over the game sessions and replays.

Pages (static HTML and JavaScript in ``static/``: they draw JSON and post
moves, and decide nothing about the rules):

- ``/``: the start page (game, players, options, opponents, seat or watch);
- ``/play?game=bobs_hat&players=4&opponents=strong,strong,random&hands=2&seat=0``:
  starts a game from the link (any game option is a parameter; ``seat=none``
  watches bots, named by ``agents``; ``seed`` deals a game again; ``speed``
  is the page's milliseconds per bot move);
- ``/records``: the records folder's games and an upload form;
- ``/replay?file=NAME&record=N`` (or ``upload=ID``, or ``game=ID`` for a
  game just played): step through a game, every hand face up.

The JSON API they use (errors are ``{"error": "..."}`` with a 4xx status):

- ``GET /api/meta``: the games, their options and the bots on offer;
- ``POST /api/games`` (the ``/play`` parameters as JSON) -> the table;
- ``GET /api/games/{id}?since=N`` -> the table, with the log from entry N;
- ``POST /api/games/{id}/move`` ``{"move": "blue14", "turn": T}`` (or
  ``"action": ID``, or both naming the same move; ``"renege": true`` to
  confirm a renege) -> the table;
  an illegal move (400), a move for another turn or a bot's turn (409)
  changes nothing;
- ``POST /api/games/{id}/advance`` ``{"steps": N}``: up to N bot moves;
- ``DELETE /api/games/{id}``: leave the game (nothing saved);
- ``GET /api/games/{id}/record``: the finished game's record (JSON Lines);
- ``GET /api/records``; ``GET /api/replay?file=NAME&record=N``;
  ``POST /api/uploads`` (a records file as the body or as the form field
  ``file``; at most ``max_upload`` bytes) -> its records, checked like ``replay``.

Safety against other web sites (a page elsewhere can make the visitor's
browser send requests here: links, forms, ``no-cors`` fetches):

- requests must name a host the server is bound to (no DNS rebinding);
- every request that changes something (any method but GET and HEAD), and
  every ``/api/`` request, is refused (403) when the browser says it comes
  from another origin (``Sec-Fetch-Site`` other than ``same-origin`` or
  ``none``, or an ``Origin`` that is not this server's); CORS preflights are
  never approved;
- JSON bodies must say ``Content-Type: application/json`` (a cross-site page
  cannot send that without a preflight), and an upload must carry the header
  ``X-Bobshat: 1`` for the same reason (``curl -H 'X-Bobshat: 1' -F
  file=@games.jsonl``);
- ``/play`` opened from another site (a link, a form) does not start the game:
  the page shows what the link asks for and waits for a click;
- agent specs are checked against the request caps
  (:data:`agents.registry.REQUEST_CAPS`) and the file allow-list (see
  :class:`~bobshat.web.session.AgentCatalog`);
- an upload costs a bounded multiple of ``max_upload`` in memory and in the
  response; errors are always ``{"error": ...}``, and a failure (500) never
  closes the connection;
- pages carry a strict Content Security Policy, and every game and upload is
  dropped after ``idle_timeout`` seconds without a request.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import json
import logging
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers, MutableHeaders, State
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, Response
from starlette.responses import JSONResponse as _StarletteJSONResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from bobshat_env.games import DESCRIPTIONS, make_game

from .replay import ReplaySources, frames
from .session import AgentCatalog, SessionStore, WebError

STATIC = Path(__file__).resolve().parent / "static"
MAX_JSON_BYTES = 64 * 1024  # a move, a game's options: far below this
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")  # Host header names of this machine
_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)


class JSONResponse(_StarletteJSONResponse):
    """JSON in ASCII (``\\u`` escapes): a record may hold an unpaired surrogate (JSON's ``"\\udcff"``), which
    UTF-8 cannot encode; Starlette's own rendering (``ensure_ascii=False``) then failed with a 500."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, allow_nan=False, separators=(",", ":")).encode("ascii")


SAFE_SITES = ("same-origin", "none")  # Sec-Fetch-Site of this server's own pages, or of a typed address
UPLOAD_HEADER = "x-bobshat"  # a custom header: a browser sends it cross-origin only after a preflight (never granted)
_log = logging.getLogger("bobshat.web")


class _SecurityHeaders:
    """Adds the Content Security Policy and no-sniff headers to every response (pure ASGI)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: dict) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers.setdefault("Content-Security-Policy", _CSP)
                headers.setdefault("X-Content-Type-Options", "nosniff")
                headers.setdefault("X-Frame-Options", "DENY")
                headers.setdefault("Referrer-Policy", "no-referrer")
                headers.setdefault("Cache-Control", "no-store")
            await send(message)

        await self.app(scope, receive, send_with_headers)


async def _send_json(send: Any, status: int, message: str) -> None:
    """Send ``{"error": message}`` as a whole response from pure ASGI code."""
    body = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class _CatchAll:
    """A failure inside the app becomes a JSON 500, and the connection stays open (pure ASGI).

    (Starlette's own handler for ``Exception`` re-raises after answering, and
    uvicorn then closes the connection: the next request on it was reset.)
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: dict) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception as exc:  # every failure answers, none kills the connection
            _log.exception("bobshat serve: a request failed")
            if not started:
                text = without_folders(str(exc))[:300]  # the whole error goes to the server's log above
                await _send_json(send, 500, f"the server failed: {type(exc).__name__}: {text}")


# A quoted absolute path, spaces and all ('/home/my user/x.pt', as OSError's text quotes a file name); then
# an unquoted one (POSIX, or Windows with its drive) not inside a word, a relative path or a URL, which ends at
# the first space.
_QUOTED_PATH = re.compile(r"""(['"])((?:[A-Za-z]:)?[\\/][^'"\n]*)\1""")
_ABSOLUTE_PATH = re.compile(r"(?<![\w.~:/\\-])(?:[A-Za-z]:)?(?:[\\/]+[^\\/\s'\"]+)+[\\/]*")


def without_folders(text: str) -> str:
    """``text`` with every absolute path cut to its last name: ``'/srv/x/games.jsonl'`` -> ``'games.jsonl'``.

    The 500 answer shows a page what failed (a full disk, say), but an
    error's text can carry the server's own folders, which a page (of any
    origin, if the server listens beyond this machine) has no business
    learning; the server's log keeps the whole text.
    """
    text = _QUOTED_PATH.sub(lambda m: m[1] + _last_name(m[2]) + m[1], text)  # spaces and all: OSError quotes
    return _ABSOLUTE_PATH.sub(lambda m: _last_name(m.group()), text)


def _last_name(path: str) -> str:
    """The last name of a path (``/a/b/`` -> ``b``), either separator."""
    return re.split(r"[\\/]+", path.rstrip("\\/"))[-1]


def host_name(host_header: str) -> str:
    """The host of a ``Host`` header without its port (``[::1]:8000`` -> ``[::1]``), lower case."""
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[: host.find("]") + 1] if "]" in host else host
    return host.partition(":")[0]


def foreign(scope: dict, headers: Any) -> str | None:
    """Why a request comes from a page of another origin (the browser's own headers say so), or None.

    ``Sec-Fetch-Site`` (sent by every current browser) must be ``same-origin``
    or ``none`` (an address typed or bookmarked: the user's own act); an
    ``Origin`` must be this server's own (``http://`` and the Host header).
    Requests without either header (curl, scripts) are the user's own.
    """
    site = headers.get("sec-fetch-site")
    if site is not None and site.strip().lower() not in SAFE_SITES:
        return f"Sec-Fetch-Site: {site[:40]}"
    origin = headers.get("origin")
    if origin is not None:
        own = f"{scope.get('scheme', 'http')}://{headers.get('host', '')}".lower()
        if origin.strip().lower() != own:
            return f"Origin: {origin[:80]}"
    return None


def foreign_navigation(scope: dict, headers: Any) -> bool:
    """Whether a page was opened from another site (a link, a form, a frame) rather than by the user or this server.

    Like :func:`foreign`, and where a browser sends no ``Sec-Fetch-Site``, a
    ``Referer`` from another origin counts too.
    """
    if foreign(scope, headers) is not None:
        return True
    referer = headers.get("referer")
    if headers.get("sec-fetch-site") is None and referer:
        own = f"{scope.get('scheme', 'http')}://{headers.get('host', '')}/".lower()
        return not (referer.lower() + "/").startswith(own)
    return False


class _Guard:
    """The host allow-list and the cross-origin refusals (pure ASGI; JSON errors).

    hosts: Host names accepted (``["*"]``: any). A request whose Host is not
    one of them is refused (400; no DNS rebinding). A request that changes
    something (not GET or HEAD) or asks the API, sent by a page of another
    origin, is refused (403): see :func:`foreign`. CORS preflights
    (``OPTIONS``) come from other origins by definition and are refused too.
    """

    def __init__(self, app: Any, hosts: list[str]) -> None:
        self.app = app
        self.hosts = [h.lower() for h in hosts]

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        if "*" not in self.hosts and host_name(headers.get("host", "")) not in self.hosts:
            await _send_json(send, 400, "this server answers only to its own address (the Host header names another)")
            return
        method = scope.get("method", "GET").upper()
        if method not in ("GET", "HEAD") or scope.get("path", "").startswith("/api/"):
            why = foreign(scope, headers)
            if why is not None:
                await _send_json(send, 403, f"refused: the request comes from a page of another site ({why})")
                return
        await self.app(scope, receive, send)


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


async def _read_body(request: Request, limit: int, what: str) -> bytes:
    """The request body, refused (413) past ``limit`` bytes before more than that is read."""
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            raise WebError(400, "a bad Content-Length header")
        if int(declared) > limit:
            raise WebError(413, f"{what} has {int(declared):,} bytes; the limit is {limit:,}")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise WebError(413, f"{what} is over the limit of {limit:,} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


async def _json_body(request: Request) -> dict[str, Any]:
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise WebError(415, f"send JSON with Content-Type: application/json (got {kind or 'none'!r})")
    body = await _read_body(request, MAX_JSON_BYTES, "the request")
    if not body.strip():
        return {}
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as err:
        raise WebError(400, f"the body is not valid JSON: {err}") from None
    if not isinstance(data, dict):
        raise WebError(400, f"the body must be a JSON object, got {type(data).__name__}")
    return data


def _int_param(request: Request, name: str, default: int | None = None) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        if default is None:
            raise WebError(400, f"the {name} parameter is missing")
        return default
    if not raw.isdigit() or len(raw) > 9:
        raise WebError(400, f"{name} must be a non-negative integer, got {raw!r}")
    return int(raw)


def _meta(catalog: AgentCatalog) -> dict[str, Any]:
    """The games, their options (with kinds, defaults and choices) and the bots offered per player count."""
    games = []
    for d in DESCRIPTIONS:
        defaults = {f.name: f.default for f in dataclasses.fields(d.config_cls)}
        players = d.player_counts()
        choices = getattr(d.config_cls, "OPTION_CHOICES", {})
        options = []
        for name in ("first_dealer", *d.cli_options):
            default = defaults[name]
            kind = "bool" if isinstance(default, bool) else "choice" if name in choices else "int"
            options.append(
                {
                    "name": name,
                    "label": name.replace("_", " "),
                    "kind": kind,
                    "default": default,
                    "choices": list(choices.get(name, ())),
                }
            )
        agents = {str(n): catalog.offered(make_game(d.name, players=n)) for n in players}
        games.append(
            {
                "name": d.name,
                "title": d.title,
                "players": players,
                "default_players": defaults["players"],
                "options": options,
                "agents": agents,
            }
        )
    return {"games": games}


# ==========================================================================
# The handlers: module-level, each reads what it needs from ``request.app.state`` (set up by create_app)
_PAGES = {"/": "index.html", "/play": "play.html", "/replay": "replay.html", "/records": "records.html"}


async def page(request: Request) -> Response:
    """A static page by its path; ``/play`` opened from another site waits for a click (``data-confirm``)."""
    name = _PAGES[request.url.path]
    if name == "play.html" and foreign_navigation(request.scope, request.headers):
        # opened from another site: the page shows the link's game and waits for a click to start it
        html = (STATIC / name).read_text(encoding="utf-8")
        return HTMLResponse(html.replace("<body>", '<body data-confirm="link">', 1))
    return FileResponse(STATIC / name, media_type="text/html")


async def meta(request: Request) -> Response:
    """``GET /api/meta``: the games, their options and the bots on offer (worked out once)."""
    state = request.app.state
    if state.meta is None:
        state.meta = await run_in_threadpool(_meta, state.catalog)
    return JSONResponse(state.meta)


async def new_game(request: Request) -> Response:
    """``POST /api/games``: a new game from the ``/play`` parameters; its table."""
    params = await _json_body(request)
    session = await run_in_threadpool(request.app.state.store.create, params)
    return JSONResponse(await run_in_threadpool(session.view), status_code=201)


async def show_game(request: Request) -> Response:
    """``GET /api/games/{id}?since=N``: the table, with the log from entry N."""
    session = request.app.state.store.get(request.path_params["gid"])
    return JSONResponse(await run_in_threadpool(session.view, _int_param(request, "since", 0)))


async def move(request: Request) -> Response:
    """``POST /api/games/{id}/move``: the human's move; the table after it."""
    session = request.app.state.store.get(request.path_params["gid"])
    body = await _json_body(request)
    unknown = sorted(set(body) - {"move", "action", "turn", "renege", "since"})
    if unknown:
        raise WebError(400, f"unknown key(s) {', '.join(unknown)}; a move has move (or action), turn, renege")
    renege = body.get("renege", False)
    if not isinstance(renege, bool):
        raise WebError(400, f"renege must be true or false, got {renege!r}")
    since = _since(body)
    await run_in_threadpool(session.move, body.get("move"), body.get("action"), body.get("turn"), renege)
    return JSONResponse(await run_in_threadpool(session.view, since))


async def advance(request: Request) -> Response:
    """``POST /api/games/{id}/advance``: up to ``steps`` bot moves; the table after them."""
    session = request.app.state.store.get(request.path_params["gid"])
    body = await _json_body(request)
    since = _since(body)
    await run_in_threadpool(session.advance, body.get("steps", 1))
    return JSONResponse(await run_in_threadpool(session.view, since))


async def leave(request: Request) -> Response:
    """``DELETE /api/games/{id}``: leave the game (nothing saved)."""
    request.app.state.store.remove(request.path_params["gid"])
    return Response(status_code=204)


async def record(request: Request) -> Response:
    """``GET /api/games/{id}/record``: the finished game's record, as a JSON Lines download."""
    session = request.app.state.store.get(request.path_params["gid"])
    if session.record is None:
        raise WebError(409, "the game is not over: its record is written at the end")
    name = f"bobshat-{session.game.name}-seed{session.seed}.jsonl"
    return Response(
        json.dumps(session.record, separators=(",", ":")) + "\n",
        media_type="application/x-ndjson",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


async def records(request: Request) -> Response:
    """``GET /api/records``: the records folder's files, each record checked like ``bobshat replay``."""
    state = request.app.state
    files = await run_in_threadpool(state.sources.listing)
    # the folder's name only: its absolute path tells a page nothing it needs about this machine
    return JSONResponse({"folder": state.folder.name, "files": files, "max_upload": state.max_upload})


async def replay(request: Request) -> Response:
    """``GET /api/replay``: the frames of one record (``file=NAME``, ``upload=ID`` or ``game=ID``)."""
    state = request.app.state
    q = request.query_params
    index = _int_param(request, "record", 0)
    if "game" in q:
        session = state.store.get(q["game"])
        if session.record is None:
            raise WebError(409, "the game is not over yet")
        rec = session.record
    elif "upload" in q:
        rec = state.sources.from_upload(q["upload"], index)
    elif "file" in q:
        rec = await run_in_threadpool(state.sources.from_file, q["file"], index)
    else:
        raise WebError(400, "name a record: file=NAME&record=N, upload=ID&record=N or game=ID")
    return JSONResponse(await run_in_threadpool(frames, rec))


async def _uploaded_file(request: Request, body: bytes, name: str) -> tuple[str, bytes]:
    """The file field of a ``multipart/form-data`` body already read (its size checked): its name and bytes."""

    async def replay_body() -> dict:
        return {"type": "http.request", "body": body, "more_body": False}

    try:
        form = await Request(request.scope, replay_body).form(max_files=1, max_fields=4)
    except HTTPException as err:
        raise WebError(400, f"the form cannot be read: {err.detail}") from None
    field = form.get("file")
    if field is None or isinstance(field, str):
        raise WebError(400, "the form has no file field named 'file'")
    name = field.filename or name
    data = await field.read()
    await form.close()
    return name, data


async def upload(request: Request) -> Response:
    """``POST /api/uploads``: a records file (the body, or the form field ``file``); its records, checked."""
    state = request.app.state
    if request.headers.get(UPLOAD_HEADER, "").strip() != "1":
        # a text/plain or multipart POST needs no CORS preflight; a custom header does (and none is granted)
        raise WebError(403, f"an upload must carry the header {UPLOAD_HEADER.title()}: 1 (the page sends it)")
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    overhead = 16 * 1024 if kind == "multipart/form-data" else 0
    body = await _read_body(request, state.max_upload + overhead, "the upload")
    name = request.query_params.get("name", "")
    if kind == "multipart/form-data":
        name, body = await _uploaded_file(request, body, name)
    data = await run_in_threadpool(state.sources.add_upload, name[:200], body, state.clock())
    return JSONResponse(data, status_code=201)


async def web_error(request: Request, exc: Exception) -> Response:
    """A refused request (:class:`WebError`) as ``{"error": ...}`` with its status."""
    assert isinstance(exc, WebError)
    return _error(exc.status, exc.message)


async def http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own HTTP errors (404, 405) as ``{"error": ...}`` too."""
    assert isinstance(exc, HTTPException)
    return _error(exc.status_code, str(exc.detail))


def sweep(state: State) -> None:
    """Drop the games and uploads idle longer than the timeout."""
    state.store.sweep()
    state.sources.sweep(state.clock(), state.idle_timeout)


@contextlib.asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    """While the server runs, a task sweeps idle games and uploads every ``sweep_every`` seconds."""

    async def sweeper() -> None:
        while True:
            await asyncio.sleep(app.state.sweep_every)
            app.state.sweep()

    task = asyncio.create_task(sweeper())
    try:
        yield
    finally:
        task.cancel()


ROUTES = [
    *(Route(path, page) for path in _PAGES),
    Route("/api/meta", meta),
    Route("/api/games", new_game, methods=["POST"]),
    Route("/api/games/{gid}", show_game, methods=["GET"]),
    Route("/api/games/{gid}", leave, methods=["DELETE"]),
    Route("/api/games/{gid}/move", move, methods=["POST"]),
    Route("/api/games/{gid}/advance", advance, methods=["POST"]),
    Route("/api/games/{gid}/record", record),
    Route("/api/records", records),
    Route("/api/replay", replay),
    Route("/api/uploads", upload, methods=["POST"]),
    Mount("/static", StaticFiles(directory=STATIC), name="static"),
]


def create_app(
    records_dir: str | Path,
    agents: list[str] | None = None,
    idle_timeout: float = 1800.0,
    max_games: int = 100,
    max_upload: int = 2 * 1024 * 1024,
    allowed_hosts: list[str] | None = None,
    clock: Any = time.monotonic,
    sweep_every: float | None = None,
    shipped: Path | None = None,
    catalog: AgentCatalog | None = None,
) -> Starlette:
    """The web app. ``records_dir`` must exist; ``agents`` are specs to preload (``--agents``).

    allowed_hosts: Host header values accepted (default the loopback names);
    ``["*"]`` accepts any (``--host 0.0.0.0``). clock: seconds, for the idle
    timeout. sweep_every: seconds between clean-ups (default a quarter of the
    timeout, at most a minute). catalog: the agents on offer, already built
    from ``agents`` (and ``shipped``), which are then ignored.

    The handlers are module-level functions; what they share (the games,
    the replay sources, the settings) is in ``app.state``.
    """
    folder = Path(records_dir).resolve()  # a relative folder means the one at start, whatever the cwd later
    if catalog is None:  # (``serve`` builds it first: a bad --agents is refused before the folder is made)
        catalog = AgentCatalog(agents or (), shipped=shipped)
    hosts = list(allowed_hosts) if allowed_hosts is not None else list(LOOPBACK)
    app = Starlette(
        routes=ROUTES,
        middleware=[
            Middleware(_SecurityHeaders),
            Middleware(_CatchAll),
            Middleware(_Guard, hosts=hosts),
            Middleware(GZipMiddleware, minimum_size=2048),
        ],
        exception_handlers={WebError: web_error, HTTPException: http_error},
        lifespan=lifespan,
    )
    state = app.state
    state.allowed_hosts = hosts
    state.folder = folder
    state.catalog = catalog
    state.store = SessionStore(folder, catalog, idle_timeout=idle_timeout, max_games=max_games, clock=clock)
    state.sources = ReplaySources(folder, max_upload)
    state.max_upload = max_upload
    state.idle_timeout = idle_timeout
    state.clock = clock
    state.meta = None  # the games and bots on offer, worked out at the first /api/meta
    state.sweep_every = sweep_every if sweep_every is not None else min(60.0, idle_timeout / 4)
    state.sweep = functools.partial(sweep, state)
    return app


def _since(body: dict) -> int:
    since = body.get("since", 0)
    if isinstance(since, bool) or not isinstance(since, int) or since < 0:
        raise WebError(400, f"since must be a non-negative integer, got {since!r}")
    return since
