"""``python -m hookloop``: the same command line as the ``hookloop`` script."""

from hookloop.cli import main

if __name__ == "__main__":
    main()
