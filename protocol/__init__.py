"""The venue protocol: key layout, Lua scripts, and the calls that run them."""
