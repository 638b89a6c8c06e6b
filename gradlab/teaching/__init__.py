"""Teaching content: the function catalogue, presets and the predict-then-reveal questions."""
