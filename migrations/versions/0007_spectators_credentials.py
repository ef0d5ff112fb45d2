"""Spectators' links, and the log of credential changes every process watches.

``spectator_links``: a table's read-only link (keyed by its game, as every table of a
game): the sha256 of its token and the delay the service applies to it. A round's link
is two columns of ``rounds`` (``spectator_hash``, ``spectator_delay``).
``credential_changes``: one row per credential replaced or revoked (a seat's new token,
a spectator's link issued again or revoked; ``id``: the game or round), written in the
transaction that changes it; every service process polls the newest rows and forgets
the tokens it remembered for that game or round, so an old token is refused on every
process within a second. Rows older than a minute are of no use to anyone and are
deleted as new ones come (a small table, kept whole on every node as ``rounds`` is).

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "spectator_links",
        sa.Column("game_id", sa.String(64), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("delay", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"],
            ["games.id"],
            name="fk_spectator_links_game_id_games",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("game_id", name="pk_spectator_links"),
    )
    op.create_table(
        "credential_changes",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("changed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("what", sa.String(16), nullable=False),
        sa.PrimaryKeyConstraint("id", "changed_at", "what", name="pk_credential_changes"),
    )
    op.create_index(
        "ix_credential_changes_changed_at", "credential_changes", ["changed_at"], unique=False
    )
    op.add_column("rounds", sa.Column("spectator_hash", sa.String(64), nullable=True))
    op.add_column("rounds", sa.Column("spectator_delay", sa.Integer(), nullable=True))


def downgrade() -> None:
    op.drop_column("rounds", "spectator_delay")  # not batch mode: see 0002's downgrade
    op.drop_column("rounds", "spectator_hash")
    op.drop_index("ix_credential_changes_changed_at", table_name="credential_changes")
    op.drop_table("credential_changes")
    op.drop_table("spectator_links")
