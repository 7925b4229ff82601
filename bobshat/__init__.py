"""The app floor (docs/architecture.md): what people run, on top of everything else.

:mod:`.cli` is the ``bobshat`` command line, :mod:`.terminal` the game
against bots in a terminal (``bobshat play``), :mod:`.web` the browser app
(``bobshat serve``). They drive games through the same
:class:`~bobshat_env.games.Game`, agents, records and game text
(:mod:`bobshat_env.text`) as the rest of the package, and nothing below
imports them.
"""
