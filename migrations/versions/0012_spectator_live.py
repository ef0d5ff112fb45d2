"""A table's spectator link may be live in a delayed round: ``spectator_links.live``.

A round's spectator delay applies to every spectator link of its tables (the table's
own link is shown at least the round's delay behind); a director may give a featured
table a live link instead, an explicit choice kept here. Existing links are not live:
a link of a round's table is then at least the round's delay behind, as the round's
creator asked. A round's revoked link used to clear ``rounds.spectator_delay``; the
delay is now kept when the link is revoked (a revoked round's delay stays 0, as before).

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "spectator_links",
        sa.Column("live", sa.Boolean(), nullable=False, server_default=sa.false()),
    )


def downgrade() -> None:
    # not batch mode: see 0003's downgrade (SQLite would rebuild the table)
    op.execute("ALTER TABLE spectator_links DROP COLUMN live")
