"""``python -m fairstream`` runs the command line."""

from fairstream._cli import main

main()
