"""kang referee."""
