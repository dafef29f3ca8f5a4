"""The client side of the classic group protocol: Kafka's ConsumerCoordinator as a state machine."""
