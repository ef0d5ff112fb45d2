"""Alembic's scripts, shipped in the wheel as ``charleston_fsm.migrations`` (see setup.py).

Importing this package runs nothing: Alembic loads ``env.py`` and ``versions/`` by path.
"""
