"""Gradient checking from a test suite: the corpus of correct functions a checker is held to."""
