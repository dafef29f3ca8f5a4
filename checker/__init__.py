"""groupspec.checker — engines that explore models of the specification."""
