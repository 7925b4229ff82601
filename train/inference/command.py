"""``bobshat infer``: inference quality measured, or (``--train``) the card-location network trained."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.inference import METHODS, WorldSampler, cards_path, load_card_net, save_card_net
from agents.ppo_agent import load_policy, masked_logits
from agents.registry import make_agent
from bobshat_env.core.config import ConfigError
from bobshat_env.games import Game, make_game
from train.runtime.kit import write_report

from .learn import collect, train
from .measure import format_report, measure


def policy_path(args: Any, game: Game) -> str:
    """``--policy``, or the table's shipped policy; a clear error where there is none."""
    from agents.shipped import resolve_checkpoint, table_checkpoint

    if args.policy:
        return resolve_checkpoint(args.policy)
    path = table_checkpoint(game.name, game.players)
    if not path.is_file():
        raise ConfigError(f"no shipped policy for {game.name} with {game.players} players: name one with --policy")
    return str(path)


def parse_methods(text: str) -> list[str]:
    """``none,policy,learned`` -> the methods, each known and named once; ConfigError otherwise."""
    methods = [m.strip() for m in text.split(",") if m.strip()]
    if not methods:
        raise ConfigError(f"--methods names no method; choose from {', '.join(METHODS)}")
    for m in methods:
        if m not in METHODS:
            raise ConfigError(f"--methods: unknown method {m!r}; choose from {', '.join(METHODS)}")
    if len(set(methods)) < len(methods):
        raise ConfigError(f"--methods names a method twice: {text}")
    return methods


def parse_seats(text: str | None, players: int) -> tuple[int, ...] | None:
    """``--seats`` (``all`` or ``0,2``) as seat numbers, None for all; ConfigError if out of range."""
    if text is None or text.strip() == "all":
        return None
    seats: list[int] = []
    for part in (p.strip() for p in text.split(",")):
        if not part.isdigit() or int(part) >= players:
            raise ConfigError(f"--seats must be 'all' or seats 0-{players - 1} separated by commas, got {text!r}")
        seats.append(int(part))
    return tuple(sorted(set(seats)))


def cli_infer(args: Any, options: dict[str, Any]) -> int:
    """Run ``bobshat infer`` from parsed arguments (``options``: the game options)."""
    game = make_game(args.game, **options)
    policy = policy_path(args, game)
    play = args.play or f"ppo:{policy}"
    out = sys.stderr if args.json == "-" else sys.stdout
    games = args.games if args.games is not None else (1024 if args.train else 8)
    if args.train:
        if args.methods is not None:
            raise ConfigError("--methods chooses what the measurement scores; --train measures the network alone")
        if args.holdout > 0 and max(1, round(args.holdout * games)) >= games:
            raise ConfigError(f"--holdout {args.holdout:g} of {games} game(s) leaves none to fit: play more --games")
        target = Path(args.out) if args.out else cards_path(policy)
        player = make_agent(play, game, seed=args.seed)
        if not args.quiet:
            print(f"collecting: {games} games of {play}", file=sys.stderr)
        examples = collect(game, player, games, args.seed, args.max_hands, keep=args.keep)

        def show(row: dict[str, Any]) -> None:
            if not args.quiet:
                held = row.get("held_out")
                tail = f", held out {held['log_likelihood']:+.4f} (prior {held['prior_log_likelihood']:+.4f})"
                print(f"epoch {row['epoch']}: fit {-row['fit_loss']:+.4f}" + (tail if held else ""), file=sys.stderr)

        net, report = train(
            game, examples, tuple(args.hidden), args.epochs, holdout=args.holdout, seed=args.seed, progress=show
        )
        doc = {"game": game.name, "players": game.players, "policy": Path(policy).name, "play": args.play or "ppo",
               "games": games, "keep": args.keep, "seed": args.seed, **report}  # fmt: skip
        save_card_net(target, game, net, {"train": {k: v for k, v in doc.items() if k != "history"}})
        held = report["held_out"]
        if held:
            print(
                f"held-out log-likelihood per unseen card {held['log_likelihood']:+.4f} (the facts' prior "
                f"{held['prior_log_likelihood']:+.4f}), accuracy {held['accuracy']:.4f} "
                f"(prior {held['prior_accuracy']:.4f}) over {held['cards']} cards",
                file=out,
            )
        print(f"wrote {target}", file=out)
        write_report(doc, args.json or None, indent=2, wrote=True)
        return 0
    methods = parse_methods(args.methods or "none,policy")
    seats = parse_seats(args.seats, game.players)
    card_net = None
    if "learned" in methods:
        where = args.cards or str(cards_path(policy))
        if not Path(where).is_file():
            raise ConfigError(f"--methods learned: no card-location network at {where!r} (bobshat infer --train)")
        card_net = load_card_net(where, game)
    net, _ = load_policy(policy, game)

    def logits(obs: np.ndarray, mask: np.ndarray) -> torch.Tensor:
        with torch.inference_mode():
            raw, _ = net(torch.from_numpy(np.ascontiguousarray(obs, dtype=np.float32)))
            return masked_logits(raw, torch.from_numpy(np.ascontiguousarray(mask, dtype=bool)))

    samplers = {
        m: WorldSampler(
            game,
            m,
            args.worlds,
            args.oversample,
            np.random.default_rng([args.seed, i]),
            logits,
            cards=card_net,
            temper=args.temper,
        )  # fmt: skip
        for i, m in enumerate(methods)
    }
    player = make_agent(play, game, seed=args.seed)
    done = [0]

    def progress(n: int) -> None:
        done[0] += n
        if not args.quiet:
            print(f"  {done[0]}/{games} games", file=sys.stderr)

    doc = measure(game, samplers, player, games, args.seed, seats, args.max_hands, progress)
    doc.update({"policy": Path(policy).name, "play": args.play or "ppo", "oversample": args.oversample})
    doc["temper"] = args.temper
    write_report(doc, args.json or None, format_report(doc), indent=2, wrote=True)
    return 0
