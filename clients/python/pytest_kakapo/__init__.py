"""pytest-kakapo: every pytest test its own Kakapo cassette session (see plugin.py)."""

from .plugin import KakapoError, KakapoServer, KakapoSession

__all__ = ["KakapoError", "KakapoServer", "KakapoSession"]
