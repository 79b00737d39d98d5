"""hermes_store.providers."""
