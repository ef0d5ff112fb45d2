"""Spectators' links, and the log of credential changes every process watches.

``spectator_links``: one read-only link per table (``subject`` a game id) or per round (a
round id), the sha256 of its token and the delay the service applies to it.
``credential_changes``: one row per credential replaced or revoked (a seat's new token,
a spectator's link issued again or revoked), written in the transaction that changes it;
every service process polls the newest rows and forgets the tokens it remembered for
that game or round, so an old token is refused on every process within a second.

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
        sa.Column("subject", sa.String(64), nullable=False),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("delay", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("subject", name="pk_spectator_links"),
    )
    op.create_table(
        "credential_changes",
        sa.Column("subject", sa.String(64), nullable=False),
        sa.Column("changed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("what", sa.String(16), nullable=False),
        sa.PrimaryKeyConstraint("subject", "changed_at", "what", name="pk_credential_changes"),
    )
    op.create_index(
        "ix_credential_changes_changed_at", "credential_changes", ["changed_at"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_credential_changes_changed_at", table_name="credential_changes")
    op.drop_table("credential_changes")
    op.drop_table("spectator_links")
