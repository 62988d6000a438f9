"""Load generation and reporting shared by ``fairstream bench`` and ``fairstream demo``."""
