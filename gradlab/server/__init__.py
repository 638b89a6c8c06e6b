"""What a public server needs beyond the engine: time limits on work that cannot watch the clock."""
