"""``parlai-acute multiref ...`` subcommands: one module per command (``add_arguments(parser)`` and
``run(args) -> int``, its docstring the ``--help``), registered in ``parlai_acute.scripts.main``. The
rest of the package never imports these, so the library has no command-line flags in it."""
