"""``python -m skillrt``: the command line."""

from skillrt.cli import main

if __name__ == "__main__":
    main()
