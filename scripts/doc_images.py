"""Images for the docs: terminal captures and report figures as small PNGs.

    # a terminal: run the command in tmux, capture the pane with its colours, render it
    tmux new-session -d -s doc -x 100 -y 40
    tmux send-keys -t doc 'gpautotune -h' Enter
    tmux capture-pane -t doc -e -p > help.ansi
    python scripts/doc_images.py terminal help.ansi docs/screenshots/help.png

    # report figures: palette PNGs (a quarter of matplotlib's size, same look)
    python scripts/doc_images.py figure results/x-report/booth-score.png docs/figures/b.png

Terminal captures are drawn cell by cell in DejaVu Sans Mono (matplotlib ships it) with
the ANSI colours Rich parses, light text on a dark background.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib
from PIL import Image, ImageDraw, ImageFont
from rich.color import Color
from rich.console import Console
from rich.terminal_theme import MONOKAI
from rich.text import Text

FONT_DIR = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
BACKGROUND = (30, 30, 30)
FOREGROUND = (220, 220, 220)
CONSOLE = Console()


def _rgb(color: Color | None, default: tuple[int, int, int]) -> tuple[int, int, int]:
    if color is None or color.is_default:
        return default
    triplet = color.get_truecolor(MONOKAI)
    return (triplet.red, triplet.green, triplet.blue)


def terminal(ansi: Path, out: Path, size: int = 14) -> Path:
    """Render a captured pane (text with ANSI escapes) as a PNG."""
    lines = ansi.read_text().rstrip("\n").splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    texts = [Text.from_ansi(line) for line in lines]
    regular = ImageFont.truetype(str(FONT_DIR / "DejaVuSansMono.ttf"), size)
    bold = ImageFont.truetype(str(FONT_DIR / "DejaVuSansMono-Bold.ttf"), size)
    cell_w = round(regular.getlength("M"))
    cell_h = round(size * 1.3)
    cols = max((len(t.plain) for t in texts), default=1)
    pad = 12
    image = Image.new("RGB", (cols * cell_w + 2 * pad, len(texts) * cell_h + 2 * pad), BACKGROUND)
    draw = ImageDraw.Draw(image)
    for row, text in enumerate(texts):
        y = pad + row * cell_h
        for col, char in enumerate(text.plain):
            style = text.get_style_at_offset(CONSOLE, col)
            fg = _rgb(style.color, FOREGROUND)
            bg = _rgb(style.bgcolor, BACKGROUND)
            if style.reverse:
                fg, bg = bg, fg
            x = pad + col * cell_w
            if bg != BACKGROUND:
                draw.rectangle([x, y, x + cell_w, y + cell_h], fill=bg)
            if style.dim:
                fg = tuple(int(c * 0.6 + b * 0.4) for c, b in zip(fg, BACKGROUND, strict=True))
            draw.text((x, y), char, font=bold if style.bold else regular, fill=fg)
    return _save(image, out)


def figure(png: Path, out: Path) -> Path:
    """A matplotlib PNG as a 256-colour palette PNG."""
    return _save(Image.open(png).convert("RGB"), out)


def _save(image: Image.Image, out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    image.quantize(colors=256, method=Image.Quantize.FASTOCTREE).save(out, optimize=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=["terminal", "figure"])
    parser.add_argument("source", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    print((terminal if args.kind == "terminal" else figure)(args.source, args.out))


if __name__ == "__main__":
    main()
