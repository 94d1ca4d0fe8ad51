"""Packing a badge into printer rows and back: 8 dots per byte, most significant bit first, 1 = black dot.

Every printer language here uses that convention, while Pillow's mode "1" stores 1 for *white*: the one
inversion lives here so no codec gets the polarity wrong.
"""

from __future__ import annotations

from PIL import Image, ImageOps

_INVERT = bytes(255 - i for i in range(256))


def to_one_bit(image: Image.Image) -> Image.Image:
    """The image as mode "1" by a 50 % threshold (never dithered), widened with white to a multiple of 8 dots."""
    if image.mode != "1":
        image = image.convert("L").convert("1", dither=Image.Dither.NONE)
    if image.width % 8:
        padded = Image.new("1", (image.width + 8 - image.width % 8, image.height), 1)
        padded.paste(image, (0, 0))
        image = padded
    return image


def pack(image: Image.Image) -> tuple[int, int, bytes]:
    """(bytes per row, rows, row data with 1 = black)."""
    image = to_one_bit(image)
    return image.width // 8, image.height, image.tobytes().translate(_INVERT)


def unpack(data: bytes, bytes_per_row: int, rows: int) -> Image.Image:
    """A mode "1" image from rows with 1 = black."""
    if bytes_per_row <= 0 or rows <= 0:
        raise ValueError(f"empty raster: {bytes_per_row} bytes per row, {rows} rows")
    if len(data) != bytes_per_row * rows:
        raise ValueError(f"raster has {len(data)} bytes, {bytes_per_row} x {rows} expected")
    return Image.frombytes("1", (bytes_per_row * 8, rows), bytes(data).translate(_INVERT))


def fit_width(image: Image.Image, width: int, what: str, height: int | None = None) -> Image.Image:
    """Centre the image on ``width`` (and ``height``) dots: pad with white, or trim white edges the printer
    cannot reach.

    Raises:
        ValueError: trimming would cut ink (the image was laid out for larger stock than ``what`` prints).
    """
    image = to_one_bit(image)
    height = image.height if height is None else height
    if image.size == (width, height):
        return image
    left, top = (image.width - width) // 2, (image.height - height) // 2
    ink = ImageOps.invert(image.convert("L")).getbbox()  # bbox of the black dots
    if ink is not None and (
        (left > 0 and (ink[0] < left or ink[2] > left + width)) or (top > 0 and (ink[1] < top or ink[3] > top + height))
    ):
        raise ValueError(
            f"image is {image.width}x{image.height} dots with ink at {ink}; {what} prints only {width}x{height} "
            "dots (render the badge for the printable area)"
        )
    fitted = Image.new("1", (width, height), 1)
    fitted.paste(
        image.crop(
            (max(left, 0), max(top, 0), max(left, 0) + min(width, image.width), max(top, 0) + min(height, image.height))
        ),
        (max(-left, 0), max(-top, 0)),
    )
    return fitted
