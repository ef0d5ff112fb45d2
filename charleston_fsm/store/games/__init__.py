"""Games: created (registry), written (the one write path and its statements), read, played by
the clock and by bots, sealed when finished.
"""
