"""Helpers shared by the live labs (ipywidgets panels that draw with matplotlib)."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from PIL import Image


def canvas_png(canvas: Any) -> bytes:
    """The Agg canvas's current pixels as PNG bytes (fast compression: labs redraw often).

    Reading the buffer instead of calling ``savefig`` keeps what was blitted onto the canvas and
    skips a second full draw.
    """
    buf = io.BytesIO()
    width, height = canvas.get_width_height()
    Image.frombuffer("RGBA", (width, height), canvas.buffer_rgba()).save(buf, "PNG", compress_level=1)
    return buf.getvalue()


def setter(widget: Any, value: Any) -> Callable[[], None]:
    """A callable that moves ``widget`` to ``value``, as a reader would (for ``benchmark_interactions``)."""
    return lambda: setattr(widget, "value", value)


def interactions(
    redraw: Sequence[tuple[Any, Iterable[Any]]] = (), rerun: Sequence[tuple[Any, Iterable[Any]]] = ()
) -> dict[str, list[Callable[[], None]]]:
    """A lab's scripted interactions for ``benchmarks/run.py``, from ``(widget, values)`` pairs.

    Each value becomes one callable that moves the widget there, as a reader's drag would.
    ``"redraw"`` interactions only redraw (budget 150 ms); ``"rerun"`` ones re-run the method
    (budget 1 s). Every lab's ``benchmark_interactions()`` returns this, and the chapter contract
    test checks that both keys exist and that every callable runs.
    """
    return {
        "redraw": [setter(widget, v) for widget, values in redraw for v in values],
        "rerun": [setter(widget, v) for widget, values in rerun for v in values],
    }
