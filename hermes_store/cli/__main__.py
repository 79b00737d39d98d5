"""``python -m hermes_store.cli ...``: the ``hermes-store`` command line without its console script."""

from hermes_store.cli import main

if __name__ == "__main__":
    main()
