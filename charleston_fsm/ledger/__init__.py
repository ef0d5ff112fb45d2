"""The ledger: what makes a game's record trustworthy, with no database behind it.

Hashing and the hash chain's rows, anchors and their signatures, the signed record's
format, its offline verification, and webhooks' signatures. The store writes and reads
these rows in a database; a person holding only a record file verifies it with this
layer alone, so ``charleston-fsm record verify`` imports no database library
(``tests/test_layout.py``).
"""
