"""The TUI's text box: Textual's ``Input`` whose editing keys act in the order they were typed.

Textual's ``Input`` inserts a typed character as soon as its key reaches the box, but runs a
bound key (backspace, ctrl+u, ctrl+w, ctrl+k, the arrows, Home/End...) only once that key has
bubbled up to the app, which resolves the binding there. Keys that arrive together (typed fast,
batched over SSH, sent by tmux ``send-keys``) were then applied out of order: ctrl+u then
``canary`` left an empty box (the characters went in first, then ctrl+u deleted them all), and
backspace then ``x`` turned ``zebrafishy`` into ``zebrafish`` instead of ``zebrafishx``
(Textual issue 6605). :class:`OrderedInput` runs the box's own bindings as their key reaches
it, which is what the app would run for that key (the focused widget is the first place it
looks), only earlier; priority bindings (ctrl+c) are still resolved by the app first.
"""

from __future__ import annotations

from textual import events
from textual.widgets import Input


class OrderedInput(Input):
    """An ``Input`` that runs its own key bindings in the order the keys came (see the module)."""

    async def _on_key(self, event: events.Key) -> None:
        # Textual calls the ``_on_key`` of each class of the MRO in turn (``Input``'s inserts a
        # printable key next); ``prevent_default`` stops that walk for a key handled here
        if event.is_printable:
            return
        for binding in self._bindings.key_to_bindings.get(event.key, ()):
            if not binding.priority and await self.app.run_action(binding.action, self):
                event.stop()  # handled here: the app must not run it a second time
                event.prevent_default()
                return
