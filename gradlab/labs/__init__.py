"""The teaching labs' engines: round-off of two formulas, a network's input gradient, backward(v)."""
