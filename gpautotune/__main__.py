"""``python -m gpautotune`` runs the command-line interface (as the ``gpautotune`` script)."""

from gpautotune.cli import main

main()
