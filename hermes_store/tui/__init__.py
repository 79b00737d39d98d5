"""``hermes-store tui``: an interactive, search-as-you-type front end over every indexed session.

A front end like ``cli/``: it reads through the sessions search layer and the recall layer,
gets its store from :class:`~hermes_store.home.Home` and never creates one. Needs the
optional ``tui`` extra (Textual). Modules: ``backend`` (the store calls, no widgets),
``render`` (rows to styled text), ``resume`` (resume commands by agent), ``screens`` and
``app`` (the Textual screens).
"""
