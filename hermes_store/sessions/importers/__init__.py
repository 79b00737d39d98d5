"""hermes_store.sessions.importers."""
