"""groupspec.coverage — which spec rules exist, where they are implemented and which are reached."""
