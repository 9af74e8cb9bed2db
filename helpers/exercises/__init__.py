"""Exercise checkers, one module per notebook (``from helpers.exercises import nb04``)."""
