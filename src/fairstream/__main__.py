"""``python -m fairstream`` runs the command line."""

from fairstream.cli import main

main()
