"""The runtime floor of ``train/`` (docs/architecture.md): process plumbing that evaluation and learning share.

:mod:`.pool` runs chunks of work in worker processes (and turns SIGTERM into
a clean exit), :mod:`.distributed` does the same on a Ray cluster,
:mod:`.progress` draws progress lines, :mod:`.threads` sets torch's thread
counts, :mod:`.board` is TensorBoard's writer with one-line errors. Nothing
here imports evaluation or learning.
"""
