"""Rounds: their tables, the director's acts on them, seat credentials and hand-overs,
spectator links.
"""
