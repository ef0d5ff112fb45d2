"""A finished game's final anchor can be sealed with the digest of its replay.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("anchors", sa.Column("replay_digest", sa.String(64), nullable=True))


def downgrade() -> None:
    op.drop_column("anchors", "replay_digest")  # not batch mode: see 0002's downgrade
