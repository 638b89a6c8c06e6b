"""What a public server needs beyond the engine: wall-clock bounds on work that cannot watch the clock."""
