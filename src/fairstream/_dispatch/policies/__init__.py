"""The admission policies: fixed limits, ``aimd``, ``waves``, ``gradient`` and ``auto``."""
