"""``charleston-fsm bench``: every figure of the speed issue beside its floor, on both
databases, in one run (``docs/performance.md``).

Modules: ``run`` (one run), ``store_rows``/``replay_rows``/``http_rows``/``platform_rows``
(the rows; ``receiver``: the platform row's webhook receiver, a process of its own),
``floors`` (the database's own floor), ``load`` (the open-loop HTTP load generator),
``server`` (its ``serve`` subprocess), ``report`` (Rich, Markdown, JSON), ``command``
(the CLI). Nothing is imported here, so the CLI starts without the bench's imports.
"""
