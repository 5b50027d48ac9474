"""UCI sessions over TCP: one per connection, searching in worker processes."""
