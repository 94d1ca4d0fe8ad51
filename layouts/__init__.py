"""Badge layouts: the event's own design (a logo, ticket-type bands, a butterfly badge) drawn by the agent.

A layout says what goes where on one label stock (``model``); it is read from YAML or JSON, or from a pretix badge
layout (``pretix``), with its images and background checked (``assets``), then prepared once per printer resolution
and drawn for each badge (``draw``) with the same text machinery as the built-in design (``drivers.render``).
"""
