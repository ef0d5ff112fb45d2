"""The feed of every game's and round's lifecycle, and the webhooks' outbox.

``feed``: one row per lifecycle entry, written in the transaction of the rows that caused
it; ``position`` is given after the commit by the one sequencer of PostgreSQL
(``store/platform/feed.py``), NULL until then (and always on SQLite, where ``id`` is the order).
``webhook_endpoints``: where a platform (``organiser_id`` NULL) or an organiser receives
entries. ``webhook_outbox``: one row per endpoint and entry, written with the entry;
``webhook_attempts``: the delivery log.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

_BIG_KEY = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
_JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "feed",
        sa.Column("id", _BIG_KEY, autoincrement=True, nullable=False),
        sa.Column("entry_id", sa.String(32), nullable=False),
        sa.Column("position", sa.BigInteger(), nullable=True),
        sa.Column("type", sa.String(32), nullable=False),
        sa.Column("game_id", sa.String(64), nullable=True),
        sa.Column("round_id", sa.String(64), nullable=True),
        sa.Column("seq", sa.Integer(), nullable=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("data", _JSON, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_feed"),
        sa.UniqueConstraint("entry_id", name="uq_feed_entry_id"),
        sa.UniqueConstraint("position", name="uq_feed_position"),
    )
    # the sequencer's work: the committed entries without a position, in insert order
    op.create_index(
        "ix_feed_unpositioned",
        "feed",
        ["id"],
        postgresql_where=sa.text("position IS NULL"),
        sqlite_where=sa.text("position IS NULL"),
    )
    op.create_table(
        "webhook_endpoints",
        sa.Column("id", sa.String(32), nullable=False),
        sa.Column("url", sa.String(2000), nullable=False),
        sa.Column("event_types", sa.String(2000), nullable=False),
        sa.Column("secret", sa.String(128), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("status_reason", sa.String(500), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("organiser_id", sa.String(64), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_webhook_endpoints"),
    )
    op.create_index(
        "ix_webhook_endpoints_organiser_id", "webhook_endpoints", ["organiser_id"], unique=False
    )
    op.create_table(
        "webhook_outbox",
        sa.Column("id", _BIG_KEY, autoincrement=True, nullable=False),
        sa.Column("endpoint_id", sa.String(32), nullable=False),
        sa.Column("entry_id", sa.String(32), nullable=False),
        sa.Column("feed_id", sa.BigInteger(), nullable=False),
        sa.Column("queue", sa.String(80), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_attempt_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_status", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.String(500), nullable=True),
        sa.ForeignKeyConstraint(
            ["endpoint_id"],
            ["webhook_endpoints.id"],
            name="fk_webhook_outbox_endpoint_id_webhook_endpoints",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_webhook_outbox"),
        sa.UniqueConstraint("endpoint_id", "entry_id", name="uq_webhook_outbox_endpoint_id"),
    )
    # what is due (the workers' claim) and what comes first in a queue (the order)
    op.create_index(
        "ix_webhook_outbox_pending",
        "webhook_outbox",
        ["next_attempt_at"],
        postgresql_where=sa.text("status = 'pending'"),
        sqlite_where=sa.text("status = 'pending'"),
    )
    op.create_index(
        "ix_webhook_outbox_queue",
        "webhook_outbox",
        ["endpoint_id", "queue", "feed_id"],
        postgresql_where=sa.text("status = 'pending'"),
        sqlite_where=sa.text("status = 'pending'"),
    )
    op.create_table(
        "webhook_attempts",
        sa.Column("id", _BIG_KEY, autoincrement=True, nullable=False),
        sa.Column("endpoint_id", sa.String(32), nullable=False),
        sa.Column("entry_id", sa.String(32), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("error", sa.String(500), nullable=True),
        sa.Column("milliseconds", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["endpoint_id"],
            ["webhook_endpoints.id"],
            name="fk_webhook_attempts_endpoint_id_webhook_endpoints",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_webhook_attempts"),
    )
    op.create_index(
        "ix_webhook_attempts_endpoint_id", "webhook_attempts", ["endpoint_id"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_webhook_attempts_endpoint_id", table_name="webhook_attempts")
    op.drop_table("webhook_attempts")
    op.drop_index("ix_webhook_outbox_queue", table_name="webhook_outbox")
    op.drop_index("ix_webhook_outbox_pending", table_name="webhook_outbox")
    op.drop_table("webhook_outbox")
    op.drop_index("ix_webhook_endpoints_organiser_id", table_name="webhook_endpoints")
    op.drop_table("webhook_endpoints")
    op.drop_index("ix_feed_unpositioned", table_name="feed")
    op.drop_table("feed")
