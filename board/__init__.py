"""The fleet board: its server (``board.server``) and the page it serves (index.html, board.js, board.css)."""
