"""hermes_store.sessions."""
