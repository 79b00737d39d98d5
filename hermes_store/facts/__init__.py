"""hermes_store.facts."""
