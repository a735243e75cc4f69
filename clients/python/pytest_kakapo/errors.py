"""The one error pytest-kakapo raises."""

class KakapoError(Exception):
    """Kakapo could not be found, started or asked for a session."""
