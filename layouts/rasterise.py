"""Drawing an SVG or PDF in a process of its own, bounded in memory and time.

A file handed to `layout set` may be built to hurt what draws it: an SVG of a few bytes that declares itself 40000
pixels wide, a PDF whose compressed content stream unpacks to gigabytes, an SVG of stacked blur filters that takes
minutes of CPU. resvg and PDFium run native code that Python cannot interrupt, and an allocation they cannot make
aborts the whole process. So they run here, in a child process that limits its own address space and CPU time
before loading them; the caller waits at most ``RASTER_SECONDS`` and reports a file that needs more as refused.

Run as ``python -m layouts.rasterise MEGABYTES SECONDS``: stdin is one line of JSON (``{"kind": "svg", "sizes":
[[w, h], ...]}``) and then the file's bytes; stdout is, per size, 8 bytes of length and a PNG. A file that cannot be
drawn exits 2 with the reason on stderr.
"""

from __future__ import annotations

import json
import resource
import sys


def main() -> int:
    megabytes, seconds = int(sys.argv[1]), int(sys.argv[2])
    # Set before resvg or PDFium are loaded: an allocation past the limit fails (MemoryError, or a native abort that
    # ends this process alone), and a loop past the CPU time is killed by the kernel.
    resource.setrlimit(resource.RLIMIT_AS, (megabytes << 20, megabytes << 20))
    resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))
    header = json.loads(sys.stdin.buffer.readline())
    data = sys.stdin.buffer.read()

    from layouts import assets

    out = sys.stdout.buffer
    try:
        for width, height in header["sizes"]:
            if header["kind"] == "svg":
                image = assets.contain_svg(data, int(width), int(height))
            else:
                image = assets.pdf_to_image(data, int(width), int(height))
            png = assets.to_png(image)
            out.write(len(png).to_bytes(8, "big"))
            out.write(png)
    except ValueError as exc:
        sys.stderr.write(f"{exc}\n")
        return 2
    except MemoryError:
        sys.stderr.write("MemoryError\n")
        return 3
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
