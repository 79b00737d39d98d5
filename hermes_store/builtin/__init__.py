"""hermes_store.builtin."""
