"""fairstream's benchmarks: scripts (``python benchmarks/NAME.py``) and the matrix judge
(``python -m benchmarks.matrix``)."""
