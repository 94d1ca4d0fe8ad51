"""pretix's WSGI application served by several processes on one loopback port, as pretix runs in production
(gunicorn's workers) rather than in one process as ``runserver`` does: one Python process answers on one core.

Run by pretix's interpreter: ``python serve.py HOST PORT WORKERS``. The listening socket is made once and shared by
the forked workers (the kernel hands each connection to one of them); each answers with Django's threaded server.
SIGTERM stops the workers and then this process.

This process also keeps SQLite's query planner statistics current (:func:`keep_statistics`), as PostgreSQL's
autovacuum does for a production pretix: without them SQLite guesses, and for the check-in list's positions it
guesses wrong once check-ins exist (see there).
"""

import contextlib
import os
import signal
import socket
import sqlite3
import sys
import threading
from pathlib import Path

#: How soon after an ANALYZE the statistics keeper looks again whether the database changed (it runs ANALYZE only
#: then); each ANALYZE doubles the wait, up to ANALYZE_AT_MOST: ANALYZE holds the write lock while it reads, and
#: the statistics need renewing as the tables' shape changes (the first check-ins), not with every row.
ANALYZE_EVERY = 2.0
ANALYZE_AT_MOST = 120.0
#: Rows ANALYZE reads per index at most (SQLite's own bound for it): statistics stay cheap on a large database.
ANALYSIS_LIMIT = 1000


def keep_statistics(db: str, stop: threading.Event) -> None:
    """ANALYZE the database now and again whenever another connection changed it (2 s after the start, then ever
    less often: ANALYZE_EVERY doubled after each, up to ANALYZE_AT_MOST).

    pretix lists a check-in list's positions with each ticket's last check-in as a subquery. Without statistics
    SQLite looks those check-ins up by their list (every check-in of the list, for every ticket) instead of by the
    ticket's position: a page of 50 then takes most of a second once 1,000 check-ins exist, and a first read of
    5,000 tickets over a minute. With statistics each ticket's check-ins are found by its position. Tables
    filled before the server started get theirs at once; the check-ins table, empty then, once it has rows. The
    workers close their connection after each request, so SQLite's ``PRAGMA optimize`` (which looks only at the
    tables its own connection queried) would not see the workers' tables from here.
    """
    # mode=rw: a database gone from its place is not made anew here (a test takes it away to break pretix).
    connection = sqlite3.connect(f"{Path(db).as_uri()}?mode=rw", uri=True, timeout=30, isolation_level=None)
    seen = None
    wait = ANALYZE_EVERY
    while True:
        try:
            connection.execute(f"PRAGMA analysis_limit={ANALYSIS_LIMIT}")
            version = connection.execute("PRAGMA data_version").fetchone()[0]  # moves on another connection's commit
            if version != seen:
                connection.execute("ANALYZE")
                if seen is not None:
                    wait = min(wait * 2, ANALYZE_AT_MOST)
                seen = version
        except sqlite3.Error as exc:  # locked beyond the timeout, or broken: the next round tries again
            print(f"statistics not updated: {exc}", file=sys.stderr, flush=True)
        if stop.wait(wait):
            connection.close()
            return


def main() -> None:
    host, port, workers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    import django
    from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler, get_internal_wsgi_application

    django.setup()
    from django.conf import settings

    app = get_internal_wsgi_application()
    if settings.DEBUG:
        # As runserver does in debug mode: pretix's static files (a default badge layout's background PDF) are
        # served by Django itself; in production a web server in front of pretix serves them.
        from django.contrib.staticfiles.handlers import StaticFilesHandler

        app = StaticFilesHandler(app)
    listener = socket.create_server((host, port), backlog=128)
    children = []
    for _ in range(workers):
        pid = os.fork()
        if pid == 0:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            server = ThreadedWSGIServer((host, port), WSGIRequestHandler, bind_and_activate=False)
            server.socket.close()
            server.socket = listener
            # What binding would have set: the names the WSGI environ carries.
            server.server_name, server.server_port = host, port
            server.setup_environ()
            server.set_app(app)
            server.serve_forever()
            os._exit(0)
        children.append(pid)
    # Started after the forks: a worker inherits no thread.
    stopping = threading.Event()
    keeper = threading.Thread(
        target=keep_statistics, args=(str(settings.DATABASES["default"]["NAME"]), stopping), daemon=True
    )
    keeper.start()

    def stop(*_: object) -> None:
        for child in children:
            with contextlib.suppress(ProcessLookupError):  # gone already
                os.kill(child, signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    for _ in children:
        try:
            os.wait()
        except ChildProcessError:
            break
        stop()  # one worker gone (crashed or stopped): stop them all, so a broken server is seen at once
    stopping.set()
    keeper.join(timeout=5)
    sys.exit(0)


if __name__ == "__main__":
    main()
