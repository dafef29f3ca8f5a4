"""groupspec.verify — a preset's check as the product runs it (`groupspec check`, the swarm):
the engine chosen (this process and its workers, or Spark), the check, its result document."""
