"""``python -m charleston_fsm``: the ``charleston-fsm`` command line, without its script."""

from charleston_fsm.cli import run_as_module

if __name__ == "__main__":
    run_as_module("charleston_fsm")
