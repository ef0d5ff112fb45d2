"""Shared fixtures. Database fixtures live beside the store tests' needs (see below)."""
