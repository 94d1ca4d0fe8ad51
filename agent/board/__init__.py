"""The fleet board: its server (``agent.board.server``) and the page it serves (index.html, board.js, board.css)."""
