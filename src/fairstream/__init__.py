"""fairstream."""
