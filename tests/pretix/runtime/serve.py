"""pretix's WSGI application served by several processes on one loopback port, as pretix runs in production
(gunicorn's workers) rather than in one process as ``runserver`` does: one Python process answers on one core.

Run by pretix's interpreter: ``python serve.py HOST PORT WORKERS``. The listening socket is made once and shared by
the forked workers (the kernel hands each connection to one of them); each answers with Django's threaded server.
SIGTERM stops the workers and then this process.
"""

import contextlib
import os
import signal
import socket
import sys


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
    sys.exit(0)


if __name__ == "__main__":
    main()
