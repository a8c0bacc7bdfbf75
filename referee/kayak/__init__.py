"""kayak referee."""
