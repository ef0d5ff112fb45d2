"""Packaging that pyproject.toml alone cannot say: ``migrations/`` ships inside the wheel.

The repository keeps Alembic's scripts at the root (``migrations/``, next to
``alembic.ini``); the wheel carries them as the package ``charleston_fsm.migrations``, so a
store installed anywhere finds its migrations through importlib, in an editable install
and in a built wheel alike. ``find_packages`` keeps every other subpackage listed by itself.
"""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["charleston_fsm*"]), "charleston_fsm.migrations"],
    package_dir={"charleston_fsm.migrations": "migrations"},
    package_data={
        "charleston_fsm": ["py.typed", "web/static/*"],
        "charleston_fsm.migrations": ["script.py.mako", "versions/*.py"],
    },
)
