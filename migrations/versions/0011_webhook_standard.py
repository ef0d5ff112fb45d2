"""Webhook endpoints at the webhook services' standard: rotation, holds, disabling.

``previous_secret`` / ``previous_secret_until``: the secret a rotation replaced, which
still signs (a second ``v1`` signature) until then (``store/platform/webhooks.py``, ``rotate``).
``held_until``: none of the endpoint's entries is sent before it (it did not answer, or
asked to wait: 429, ``Retry-After``; ``store/platform/outbox.py``). ``failing_since``: the first
failed attempt since its last delivery; an endpoint failing for the whole span of
``CHARLESTON_WEBHOOK_DISABLE_AFTER`` is disabled (``webhook.disabled`` in the feed).

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

_COLUMNS = (
    ("previous_secret", sa.String(128)),
    ("previous_secret_until", sa.DateTime(timezone=True)),
    ("held_until", sa.DateTime(timezone=True)),
    ("failing_since", sa.DateTime(timezone=True)),
)


def upgrade() -> None:
    for name, kind in _COLUMNS:
        op.add_column("webhook_endpoints", sa.Column(name, kind, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("webhook_endpoints") as batch:
        for name, _ in reversed(_COLUMNS):
            batch.drop_column(name)
