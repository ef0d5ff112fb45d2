"""The platform's side: the positioned feed, the outbox and webhook deliveries, organisers and
their keys.
"""
