"""Per-game clocks: the clock document and the indexed time of its next deadline.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

JSONDoc = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.add_column("games", sa.Column("clock", JSONDoc, nullable=True))
    op.add_column("games", sa.Column("next_due", sa.DateTime(timezone=True), nullable=True))
    op.create_index("ix_games_next_due", "games", ["next_due"])


def downgrade() -> None:
    op.drop_index("ix_games_next_due", table_name="games")
    op.drop_column("games", "next_due")  # not batch mode: see 0002's downgrade
    op.drop_column("games", "clock")
