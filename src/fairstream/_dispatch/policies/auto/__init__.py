"""``auto``: a state machine that fills the server to what it runs and holds the rest."""
