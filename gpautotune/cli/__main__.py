"""``python -m gpautotune.cli`` runs the command line (as ``python -m gpautotune``)."""

from gpautotune.cli import main

if __name__ == "__main__":
    main()
