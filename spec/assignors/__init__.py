"""Kafka's four client-side partition assignors, as reference §7 and §8 describe them."""
