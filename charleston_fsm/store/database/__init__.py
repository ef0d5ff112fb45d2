"""The database: engine and pools, schema and its models, connection budget, notices
(LISTEN/NOTIFY), the standbys reads may go to, and where the URL comes from.
"""
