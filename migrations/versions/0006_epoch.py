"""A game's epoch: moved by every change of the game made beside its commands.

A process that cached a game writes on condition that the game is still at the seq and
the epoch it cached; a quarantine opened or lifted, a projection rebuilt or a clock
reset move the epoch, so such a write stores nothing and the game is read again.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "games", sa.Column("epoch", sa.Integer(), nullable=False, server_default=sa.text("0"))
    )


def downgrade() -> None:
    op.drop_column("games", "epoch")  # not batch mode: see 0002's downgrade
