"""The chapters as plain Jupyter notebooks, for every front-end that is not the website.

The chapters (``book/NN-slug.md``) are MyST-markdown notebooks. The website renders MyST;
JupyterLab, Binder, JupyterHub and Colab render only CommonMark plus ``$``-math, so there the
same file would show admonitions as code blocks, ``{glue:text}`` placeholders instead of numbers,
raw ``{cite:p}`` roles and every exercise's solution in full. :func:`convert` turns a chapter
into a notebook that reads right in all of them:

* directives become Markdown: admonitions and shared ``{include}`` boxes become quotes with a
  bold title; ``{math}`` blocks become ``$$ ... \\tag{n} $$`` with the number the site gives them,
  and ``{eq}`` references become ``(n)``; ``{literalinclude}`` inlines the code it shows (with
  ``:pyobject:``, the function or class is cut out of the module with :mod:`ast`);
* citations become "Author (year)" / "(Author et al., year)" from ``book/references.bib``
  (pybtex), and ``{bibliography}`` the list of the works the chapter cites;
* numbers: a paragraph that shows glued numbers becomes a *live text* cell (input hidden) whose
  saved output is the paragraph with each number named ([`name`]); when it runs,
  :func:`live_text` shows the paragraph with the numbers in place, and each later ``glue(...)``
  call (:func:`glue`, which also prints the value under the cell that computes it) fills in the
  numbers that were not computed yet, so after "Run all" every paragraph reads as on the site.
  A notebook that has already been executed (the site's download) gets the values written into
  plain Markdown instead;
* exercises stay where they are, as quotes; their solutions move to a "Solutions" section at the
  end of the notebook, one heading per solution, folded (JupyterLab's
  ``jp-MarkdownHeadingCollapsed`` cell metadata, Colab's ``collapsed_sections``). Their code
  cells still run with "Run all", after the chapter, whose variables they use.

Folded headings rather than per-cell ``jupyter.source_hidden`` because a solution is usually a
Markdown cell *and* code cells, and hidden cells still show their outputs and an empty bar per
cell; one folded heading hides the whole solution, in JupyterLab and in Colab, and one click
opens it. At the end of the notebook rather than in place, because a folded heading hides
everything up to the next heading, which in place could swallow the chapter's next paragraph.

``notebooks/*.ipynb`` (``make notebooks``, :func:`main`) are these conversions plus a first
cell that, on Colab only, installs the tested versions; :mod:`explorables.sphinx_ext` converts
the executed notebook for the site's download button.
"""

from __future__ import annotations

import ast
import functools
import os
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat

from explorables import teaching

ROOT = Path(__file__).resolve().parents[2]

# --- inside a notebook: glue -----------------------------------------------------------------------

#: glued values of this kernel, by name (filled by :func:`glue`)
GLUED: dict[str, Any] = {}
_FORMATS: dict[str, str] = {}


def glue_formats(formats: Mapping[str, str]) -> None:
    """Set the format (``".3f"``, ...) the text uses for each glued name; the first cell calls it."""
    _FORMATS.update(formats)


def format_value(value: Any, spec: str = "") -> str:
    """``value`` as the site's ``{glue:text}`name:spec``` shows it."""
    if spec:
        try:
            return format(value, spec)
        except (TypeError, ValueError):
            pass
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def glue(name: str, variable: Any, display: bool = True) -> None:
    """Stand-in for ``myst_nb.glue`` in the notebooks: records the value, prints it, fills the text.

    The value is shown where it is computed, as ``name = value``, and every live text cell
    (:func:`live_text`) that names it is redrawn with the number in place.
    """
    GLUED[name] = variable
    if display and not isinstance(variable, str | int | float):
        from IPython.display import display as show

        show(variable)
    else:
        print(f"{name} = {format_value(variable, _FORMATS.get(name, ''))}")
    for live in _LIVE.get(name, []):
        live.redraw()


@dataclass
class _LiveText:
    markdown: str
    names: tuple[str, ...]
    handle: Any = None

    def filled(self) -> str:
        """The paragraph with the numbers glued so far in place of their [`name`] placeholders."""
        text = self.markdown
        for name in self.names:
            if name in GLUED and isinstance(GLUED[name], str | int | float):
                text = text.replace(PLACEHOLDER.format(name=name), format_value(GLUED[name], _FORMATS.get(name, "")))
        return text

    def redraw(self) -> None:
        from IPython.display import Markdown

        if self.handle is not None:
            self.handle.update(Markdown(self.filled()))


#: live text cells shown in this kernel, by the glued names they wait for
_LIVE: dict[str, list[_LiveText]] = {}


def live_text(markdown: str, names: Iterable[str]) -> None:
    """Show a paragraph of the chapter with its glued numbers in place (a notebook's *live text* cell).

    ``markdown`` names each number as [`name`]; the numbers already glued are filled in now, the
    others when the cell that computes them runs (:func:`glue` updates this display), so a text
    that refers to a result further down reads right after "Run all".
    """
    from IPython.display import Markdown, display

    live = _LiveText(markdown, tuple(names))
    live.handle = display(Markdown(live.filled()), display_id=True)
    for name in live.names:
        _LIVE.setdefault(name, []).append(live)


def restart_if_stale(pins: Iterable[str]) -> list[str]:
    """After Colab's install cell: restart the kernel if it had already imported an older version.

    Colab preloads some packages (numpy, ...); pip replaces them on disk, but the running kernel
    keeps the old ones until it restarts. Returns the stale ``name==version`` pins (restarting
    only inside Colab; run the notebook again afterwards, the install is then a no-op).
    """
    from importlib import metadata

    modules = {"scikit-learn": "sklearn"}
    stale = []
    for pin in pins:
        name, _, version = pin.partition("==")
        module = sys.modules.get(modules.get(name, name).replace("-", "_"))
        loaded = getattr(module, "__version__", None) if module is not None else None
        if loaded is not None and loaded.split("+")[0] != version.split("+")[0]:
            stale.append(f"{name}=={loaded}")
    if stale:
        print(f"Installed the tested versions, but this session had loaded {', '.join(stale)}: restarting the "
              "session. When it is back, run all cells again.")
        try:
            metadata.version("google-colab")
        except metadata.PackageNotFoundError:
            return stale
        import os

        os.kill(os.getpid(), 9)  # Colab restarts a kernel that exits
    return stale


# --- the conversion --------------------------------------------------------------------------------

DIRECTIVE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|:{3,})\{(?P<name>[^}\s]+)\}[ \t]*(?P<arg>.*?)\s*$")
CODE_FENCE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})")
ROLE = re.compile(r"\{(?P<name>[A-Za-z][\w:+-]*)\}`(?P<content>[^`]*)`")
TARGET = re.compile(r"^\s*\((?P<label>[^()\s]+)\)=\s*$")
DOLLAR_LABEL = re.compile(r"\$\$\s*\((?P<label>[\w:.-]+)\)")
SOLUTION_BLOCKS = ("solution-start", "solution-end", "solution")
ADMONITIONS = ("attention", "caution", "danger", "error", "hint", "important", "note", "seealso", "tip", "warning")
ROLE_TEXT = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", re.S)
#: how a glued value appears in the text of a notebook that has not run yet
PLACEHOLDER = "[`{name}`]"
#: MyST-only syntax: what must not be left where a notebook front-end would show it raw
MYST_ONLY = re.compile(
    r"\{(glue|cite|eq|doc|ref|numref|math|term)(:[\w-]*)?\}`"  # roles
    r"|^\s*(`{3,}|:{3,})\{"  # directives
    r"|^\s*\([^()\s]+\)=\s*$",  # targets
    re.M,
)


@dataclass
class Directive:
    name: str
    arg: str
    options: dict[str, str]
    body: str


def parse_blocks(text: str) -> list[str | Directive]:
    """Split Markdown into plain text, verbatim code fences (kept as text) and directives."""
    lines = text.split("\n")
    out: list[str | Directive] = []
    plain: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        directive = DIRECTIVE.match(line)
        code = CODE_FENCE.match(line) if not directive else None
        if not directive and not code:
            plain.append(line)
            i += 1
            continue
        fence = (directive or code)["fence"]
        closing = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        j = i + 1
        while j < len(lines) and not closing.match(lines[j]):
            j += 1
        block = lines[i + 1 : j]
        if code:  # a plain code block: verbatim
            plain.extend(lines[i : j + 1])
            i = j + 1
            continue
        if plain:
            out.append("\n".join(plain))
            plain = []
        options, body = _options(block)
        out.append(Directive(directive["name"], directive["arg"], options, "\n".join(body)))
        i = j + 1
    if plain:
        out.append("\n".join(plain))
    return out


def _options(block: list[str]) -> tuple[dict[str, str], list[str]]:
    options: dict[str, str] = {}
    if block and block[0].strip() == "---":  # YAML options
        import yaml

        end = next((k for k in range(1, len(block)) if block[k].strip() == "---"), None)
        if end is not None:
            loaded = yaml.safe_load("\n".join(block[1:end])) or {}
            return {str(k): str(v) for k, v in loaded.items()}, block[end + 1 :]
    k = 0
    while k < len(block):
        match = re.match(r"^\s*:(?P<key>[\w-]+):\s*(?P<value>.*)$", block[k])
        if not match:
            break
        options[match["key"]] = match["value"].strip()
        k += 1
    return options, block[k:]


def find_pyobject(source: str, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef:
    """The syntax-tree node of function or class ``name`` (``Class.method`` for a method) in ``source``,
    found as Sphinx's ``literalinclude :pyobject:`` finds it."""
    nodes: Iterable[ast.AST] = ast.parse(source).body
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | None = None
    for part in name.split("."):
        defined = (n for n in nodes if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef))
        node = next((n for n in defined if n.name == part), None)
        if node is None:
            raise ValueError(f"pyobject {name!r} not found")
        nodes = node.body
    assert node is not None
    return node


def extract_pyobject(source: str, name: str) -> str:
    """The source of function or class ``name`` (``Class.method`` for a method), as in the module."""
    node = find_pyobject(source, name)
    start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    lines = source.splitlines()[start - 1 : node.end_lineno]
    indent = min(len(x) - len(x.lstrip()) for x in lines if x.strip())
    return "\n".join(x[indent:] for x in lines)


@functools.cache
def _pybtex_backend(name: str) -> Any:
    """pybtex's output backend ``name`` (what ``Text.render_as(name)`` renders with), looked up once: each
    lookup scans every installed package's entry points (40-80 ms in the project's environment), and one
    chapter renders hundreds of names (it was 85% of the time of ``explorables.colab``)."""
    from pybtex.plugin import find_plugin

    return find_plugin("pybtex.backends", name)()


@functools.cache
def _pybtex_style() -> Any:
    """pybtex's ``unsrt`` formatting style, made once (it looks up four plugins when made)."""
    from pybtex.style.formatting.unsrt import Style

    return Style()


class Bibliography:
    """Author-year citations from a BibTeX file, as the site renders them (``author_year``)."""

    def __init__(self, path: Path | None):
        self.entries: dict[str, Any] = {}
        if path is not None and path.exists():
            from pybtex.database import parse_file

            self.entries = dict(parse_file(str(path)).entries)

    def _authors(self, key: str) -> str:
        from pybtex.richtext import Text

        entry = self.entries.get(key)
        if entry is None:
            return key
        people = entry.persons.get("author") or entry.persons.get("editor") or []
        names = [Text.from_latex(" ".join(p.last_names)).render(_pybtex_backend("text")) for p in people]
        if not names:  # authors unknown (a paper cited by title and venue): its title, as the site does
            title = entry.fields.get("title")
            return f"*{Text.from_latex(title).render(_pybtex_backend('text'))}*" if title else key
        if len(names) == 1:
            return names[0]
        if len(names) == 2:
            return f"{names[0]} and {names[1]}"
        return f"{names[0]} et al."

    def _year(self, key: str) -> str:
        entry = self.entries.get(key)
        return entry.fields.get("year", "n.d.") if entry is not None else "?"

    def cite(self, keys: list[str], textual: bool) -> str:
        if textual:
            return "; ".join(f"{self._authors(k)} ({self._year(k)})" for k in keys)
        return "(" + "; ".join(f"{self._authors(k)}, {self._year(k)}" for k in keys) + ")"

    def references(self, keys: Iterable[str]) -> str:
        known = sorted({k for k in keys if k in self.entries}, key=lambda k: (self._authors(k), self._year(k)))
        if not known:
            return ""
        formatted = _pybtex_style().format_entries([self.entries[k] for k in known])
        return "\n".join(f"- {' '.join(e.text.render(_pybtex_backend('markdown')).split())}" for e in formatted)


@dataclass
class _Solution:
    title: str
    cells: list[nbformat.NotebookNode] = field(default_factory=list)


class Converter:
    """Converts one chapter (its notebook, as jupytext reads it) for the notebook front-ends."""

    def __init__(self, chapter: Path, values: Mapping[str, str] | None = None, bib: Path | None = None,
                 out_dir: Path | None = None):
        self.chapter = chapter
        self.out_dir = out_dir or chapter.parent.parent / "notebooks"  # where the notebook will live
        self.folder = chapter.parent
        self.values = dict(values or {})  # glued name -> text/plain, from an executed notebook
        self.bib = Bibliography(bib if bib is not None else self.folder / "references.bib")
        self.cited: list[str] = []
        self.formats: dict[str, str] = {}
        # numbers are chapter-relative, as on the site (explorables.sphinx_ext): "3.2" in chapter 3
        self.chapter_number = chapter_number(chapter.stem)
        self.equations: dict[str, str] = {}
        self.exercises: dict[str, tuple[str, str]] = {}
        self.targets: dict[str, str] = {}
        self.placeholders: list[str] = []  # glued names the text names but does not know yet

    # -- pre-scan: numbers and titles that references need -----------------------------------------

    def scan(self, markdown: str) -> None:
        self.equations, self.exercises = {}, {}
        pending: list[str] = []
        for line in markdown.split("\n"):
            target = TARGET.match(line)
            if target:
                pending.append(target["label"])
            elif line.strip():
                heading = re.match(r"^#{1,6}\s+(.*)$", line)
                for label in pending:
                    self.targets[label] = heading[1].strip() if heading else label
                pending = []
        for block in self._all_directives(markdown):
            if block.name == "math" and "label" in block.options:
                self.equations.setdefault(block.options["label"], self._number(len(self.equations) + 1))
            elif block.name == "exercise":
                label = block.options.get("label", f"exercise-{len(self.exercises) + 1}")
                self.exercises[label] = (self._number(len(self.exercises) + 1), block.arg)
        for match in DOLLAR_LABEL.finditer(markdown):
            self.equations.setdefault(match["label"], self._number(len(self.equations) + 1))
        for match in ROLE.finditer(markdown):
            if match["name"].startswith("glue"):
                name, _, spec = match["content"].partition(":")
                if spec:
                    self.formats.setdefault(name.strip(), spec.strip())

    def _number(self, k: int) -> str:
        return f"{self.chapter_number}.{k}" if self.chapter_number else str(k)

    def _all_directives(self, text: str) -> Iterable[Directive]:
        for block in parse_blocks(text):
            if isinstance(block, Directive):
                yield block
                yield from self._all_directives(block.body)

    # -- Markdown ---------------------------------------------------------------------------------

    def markdown(self, text: str) -> str:
        parts = []
        for block in parse_blocks(text):
            parts.append(self.directive(block) if isinstance(block, Directive) else self.inline(block))
        return "\n".join(parts).strip("\n")

    def inline(self, text: str) -> str:
        """Roles, targets, comments and labelled ``$$`` math in plain text (code fences kept)."""
        chunks: list[tuple[bool, list[str]]] = [(False, [])]  # (verbatim?, lines)
        verbatim = None
        for line in text.split("\n"):
            fence = CODE_FENCE.match(line)
            if verbatim:
                chunks[-1][1].append(line)
                if fence and fence["fence"][0] == verbatim[0] and len(fence["fence"]) >= len(verbatim):
                    verbatim = None
                    chunks.append((False, []))
            elif fence:
                verbatim = fence["fence"]
                chunks.append((True, [line]))
            elif not (TARGET.match(line) or line.startswith("%")):
                chunks[-1][1].append(line)
        return "\n".join(
            "\n".join(lines) if is_code else self._prose("\n".join(lines)) for is_code, lines in chunks if lines
        )

    def _prose(self, text: str) -> str:
        text = DOLLAR_LABEL.sub(lambda m: f"\\tag{{{self.equations.get(m['label'], '?')}}}$$", text)
        return self._roles(text)

    def _roles(self, text: str) -> str:
        # inline code spans are left alone: split them out first
        pieces = re.split(r"(`[^`]*`)", text)
        rejoined, k = [], 0
        while k < len(pieces):
            piece = pieces[k]
            # a role is "{name}" at the end of this piece followed by a code span
            if k + 1 < len(pieces) and re.search(r"\{[A-Za-z][\w:+-]*\}$", piece):
                match = re.search(r"\{(?P<name>[A-Za-z][\w:+-]*)\}$", piece)
                rejoined.append(piece[: match.start()])
                rejoined.append(self.role(match["name"], pieces[k + 1][1:-1]))
                k += 2
                continue
            rejoined.append(piece)
            k += 1
        return "".join(rejoined)

    def role(self, name: str, content: str) -> str:
        named = ROLE_TEXT.match(content)
        text, target = (named["text"], named["target"]) if named else ("", content)
        if name.startswith("cite"):
            keys = [k.strip() for k in target.split(",") if k.strip()]
            self.cited.extend(k for k in keys if k not in self.cited)
            return self.bib.cite(keys, textual=name in ("cite:t", "cite:ts", "cite:ct", "cite:alt"))
        if name.startswith("glue"):
            glued, _, spec = content.partition(":")
            glued = glued.strip()
            if glued in self.values:
                return format_value(_literal(self.values[glued]), spec.strip())
            self.placeholders.append(glued)
            return PLACEHOLDER.format(name=glued)
        if name == "eq":
            return f"({self.equations[target]})" if target in self.equations else f"({target})"
        if name == "math":
            return f"${content}$"
        if name in ("ref", "numref", "doc", "any"):
            if text:
                return text
            if target in self.exercises:
                return f"Exercise {self.exercises[target][0]}"
            if name == "doc":
                return self._doc_title(target)
            if target not in self.targets and (stem := self._chapter_stem(target)):
                return self._doc_title(stem)  # another chapter's label: its title, linked to its notebook
            return self.targets.get(target, target)
        if name in ("code", "literal", "samp", "file", "command", "kbd", "py:func", "func", "class", "meth", "mod"):
            return f"`{text or target}`"
        if name in ("sub", "subscript"):
            return f"<sub>{content}</sub>"
        if name in ("sup", "superscript"):
            return f"<sup>{content}</sup>"
        return text or target  # abbr, term, download, ...: the readable text

    def _chapter_stem(self, target: str) -> str:
        """The page stem (``NN-slug``) that a chapter label ``chapter-<slug>`` names, or ``""``."""
        match = re.fullmatch(r"chapter-(\w+)", target)
        pages = sorted(self.folder.glob(f"[0-9][0-9]-{match[1]}.md")) if match else []
        return pages[0].stem if len(pages) == 1 else ""

    def _doc_title(self, target: str) -> str:
        path = (self.folder / target).with_suffix(".md")
        title = path.stem
        if path.exists():
            heading = re.search(r"^#\s+(.+)$", path.read_text(), re.M)
            title = heading[1].strip() if heading else title
        if re.match(r"^\d\d-", path.stem):
            return f"[{title}]({path.stem}.ipynb)"
        return f"*{title}* (on the book's website)"

    def directive(self, block: Directive) -> str:
        name = block.name
        if name == "math":
            number = self.equations.get(block.options.get("label", ""))
            tag = f" \\tag{{{number}}}" if number else ""
            return f"$$\n{block.body.strip()}{tag}\n$$"
        if name in ("code-block", "code", "sourcecode"):
            return f"```{block.arg}\n{block.body}\n```"
        if name == "literalinclude":
            return self.literalinclude(block)
        if name == "include":
            path = (self.folder / block.arg).resolve()
            return self.markdown(path.read_text())
        if name == "admonition" or name in ADMONITIONS or name in ("dropdown", "margin", "sidebar", "topic"):
            title = block.arg if name in ("admonition", "dropdown", "margin", "sidebar", "topic") else name.title()
            if name in ADMONITIONS and block.arg:
                title = f"{name.title()}: {block.arg}"
            return _quote(f"**{self.inline(title)}**" if title else "", self.markdown(block.body))
        if name == "exercise":
            label = block.options.get("label", "")
            number, _ = self.exercises.get(label, ("", ""))
            title = f"Exercise {number}" if number else "Exercise"
            if block.arg:
                title += f" ({self.inline(block.arg)})"
            return _quote(f"**{title}**", self.markdown(block.body))
        if name == "bibliography":
            return self.bib.references(self.cited)
        if name in ("figure", "image"):
            alt = block.options.get("alt", "")
            image = f"![{alt}]({self._relative(block.arg)})"
            caption = self.markdown(block.body)
            return f"{image}\n\n*{caption}*" if caption else image
        if name in ("table", "list-table"):
            caption = f"*{self.inline(block.arg)}*\n\n" if block.arg else ""
            return caption + self.markdown(block.body)
        if name.startswith("glue"):
            glued = block.arg.strip()
            if glued in self.values:
                return format_value(_literal(self.values[glued]))
            return f"*(shown under the code cell that computes `{glued}`)*"
        if name in ("tab-set", "tab-item", "card", "grid", "grid-item", "grid-item-card", "div", "container"):
            heading = f"**{self.inline(block.arg)}**\n\n" if block.arg else ""
            return heading + self.markdown(block.body)
        if name == "teaching":
            card = teaching.parse_card(block.body)
            return _quote("**Learning goals and prerequisites**", self.markdown(teaching.card_markdown(card)))
        if name in ("raw", "eval-rst", "nb-exec-table", "tableofcontents", "toctree", "only", "instructor-notes",
                    "course-map"):
            return ""
        heading = f"**{name.title()}{': ' + self.inline(block.arg) if block.arg else ''}**"
        return _quote(heading, self.markdown(block.body))

    def _relative(self, path: str) -> str:
        """An image path of the chapter, as seen from the notebook's folder."""
        if re.match(r"^[a-z]+://|^/", path):
            return path
        return os.path.relpath((self.folder / path).resolve(), self.out_dir.resolve())

    def literalinclude(self, block: Directive) -> str:
        path = (self.folder / block.arg).resolve()
        source = path.read_text()
        if "pyobject" in block.options:
            code = extract_pyobject(source, block.options["pyobject"])
        else:
            code = source
            if "start-after" in block.options:
                code = code.split(block.options["start-after"], 1)[-1].split("\n", 1)[-1]
            if "end-before" in block.options:
                code = code.split(block.options["end-before"], 1)[0].rsplit("\n", 1)[0]
            if "lines" in block.options:
                code = "\n".join(_select_lines(code.splitlines(), block.options["lines"]))
        language = block.options.get("language", "python" if path.suffix == ".py" else "")
        caption = block.options.get("caption", "")
        head = f"*{self.inline(caption)}*\n\n" if caption else ""
        return f"{head}```{language}\n{code.rstrip()}\n```"

    # -- cells ------------------------------------------------------------------------------------

    def code_cell(self, cell: nbformat.NotebookNode) -> nbformat.NotebookNode:
        cell = nbformat.from_dict(dict(cell))
        cell.source = re.sub(r"^(\s*)from myst_nb import glue[ \t]*$", r"\1from explorables.notebooks import glue",
                             cell.source, flags=re.M)
        cell.source = re.sub(r"^(\s*)import myst_nb[ \t]*$", r"\1from explorables import notebooks as myst_nb",
                             cell.source, flags=re.M)
        if cell.get("outputs"):  # myst-nb's glue records: the values are in the text already
            cell.outputs = [o for o in cell.outputs if not _glue_record(o)]
        tags = set(cell.metadata.get("tags", []))
        jupyter = dict(cell.metadata.get("jupyter", {}))
        if tags & {"hide-input", "remove-input", "remove-cell", "hide-cell"}:
            jupyter["source_hidden"] = True
        if tags & {"hide-output", "remove-output", "hide-cell", "remove-cell"}:
            jupyter["outputs_hidden"] = True
        if jupyter:
            cell.metadata["jupyter"] = jupyter
        return cell

    def convert(self, nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
        """The notebook-front-end version of ``nb`` (a chapter as jupytext reads it)."""
        self.scan("\n".join(c.source for c in nb.cells if c.cell_type == "markdown"))
        cells: list[nbformat.NotebookNode] = []
        solutions: list[_Solution] = []
        current: _Solution | None = None
        folded_titles: dict[str, int] = {}
        for cell in nb.cells:
            if cell.cell_type != "markdown":
                converted = self.code_cell(cell) if cell.cell_type == "code" else cell
                (current.cells if current else cells).append(converted)
                continue
            for piece in _split_at_solutions(cell.source):
                if isinstance(piece, Directive) and piece.name in ("solution-start", "solution"):
                    current = _Solution(f"Solution to {self._exercise_title(piece.arg.strip())}")
                    solutions.append(current)
                    cells.append(nbformat.v4.new_markdown_cell(_pointer(current.title)))
                    if piece.name == "solution":  # a one-block solution
                        current.cells.append(nbformat.v4.new_markdown_cell(self.markdown(piece.body)))
                        current = None
                elif isinstance(piece, Directive) and piece.name == "solution-end":
                    current = None
                elif isinstance(piece, Directive):  # a box the site folds (:class: dropdown)
                    title = self.inline(piece.arg) or piece.name.title()
                    folded_titles[title] = folded_titles.get(title, 0) + 1
                    folded = _Solution(f"{title} {folded_titles[title]}")
                    folded.cells.append(nbformat.v4.new_markdown_cell(self.markdown(piece.body)))
                    solutions.append(folded)
                    (current.cells if current else cells).append(nbformat.v4.new_markdown_cell(_pointer(folded.title)))
                else:
                    self.placeholders = []
                    text = self.markdown(piece)
                    if text.strip():
                        (current.cells if current else cells).extend(self.text_cells(text))
        if solutions:
            cells.extend(_solutions_section(solutions))
        out = nbformat.v4.new_notebook(cells=cells, metadata=dict(nb.metadata))
        out.metadata.pop("jupytext", None)
        _number_cells(out)
        folded_ids = [c.metadata["id"] for c in out.cells if c.metadata.get("jp-MarkdownHeadingCollapsed")]
        if folded_ids:
            out.metadata["colab"] = {"collapsed_sections": folded_ids}
        return out

    def text_cells(self, text: str) -> list[nbformat.NotebookNode]:
        """Markdown cells for ``text``; the parts that name glued numbers become live text cells.

        Headings stay Markdown cells (the notebook's outline and folding rely on them).
        """
        if not self.placeholders:
            return [nbformat.v4.new_markdown_cell(text)]
        cells = []
        for chunk in _split_at_headings(text):
            names = [n for n in dict.fromkeys(self.placeholders) if PLACEHOLDER.format(name=n) in chunk]
            if not names:
                if chunk.strip():
                    cells.append(nbformat.v4.new_markdown_cell(chunk))
                continue
            source = f"# @title\nfrom explorables.notebooks import live_text\n\nlive_text({chunk!r}, {tuple(names)!r})"
            cell = nbformat.v4.new_code_cell(source)
            cell.metadata["cellView"] = "form"  # Colab: the output only
            cell.metadata["jupyter"] = {"source_hidden": True}  # JupyterLab: a folded input
            cell.metadata["tags"] = ["live-text"]
            # before it runs, the paragraph reads with each number named
            cell.outputs = [nbformat.v4.new_output("display_data", data={"text/markdown": chunk})]
            cells.append(cell)
        return cells

    def _exercise_title(self, label: str) -> str:
        number, title = self.exercises.get(label, ("", ""))
        name = f"Exercise {number}" if number else "the exercise"
        return f"{name} ({self.inline(title)})" if title else name


def chapter_number(stem: str) -> int | None:
    """The chapter's number from its file name (``03-omwu`` -> 3), or ``None`` for other pages."""
    match = re.match(r"^(\d\d)-", stem)
    return int(match[1]) if match else None


def _pointer(title: str) -> str:
    return f"*{title}: folded under **Solutions** at the end of this notebook (click its heading to unfold it).*"


def _solutions_section(solutions: list[_Solution]) -> list[nbformat.NotebookNode]:
    cells = [nbformat.v4.new_markdown_cell(
        "## Solutions\n\nEach solution is folded under its heading: click the heading (or the arrow next "
        "to it) to unfold it. Their code cells run with the rest of the notebook.")]
    for solution in solutions:
        heading = nbformat.v4.new_markdown_cell(f"### {solution.title}")
        heading.metadata["jp-MarkdownHeadingCollapsed"] = True
        cells.append(heading)
        cells.extend(solution.cells)
    return cells


def _split_at_headings(text: str) -> list[str]:
    """``text`` cut before and after each heading line (outside code fences); no empty chunks."""
    chunks: list[list[str]] = [[]]
    fence = None
    for line in text.split("\n"):
        match = CODE_FENCE.match(line)
        if fence:
            if match and match["fence"][0] == fence[0] and len(match["fence"]) >= len(fence):
                fence = None
        elif match:
            fence = match["fence"]
        elif re.match(r"^#{1,6}\s", line):
            chunks.extend([[line], []])
            continue
        chunks[-1].append(line)
    return [c for c in ("\n".join(lines).strip("\n") for lines in chunks) if c.strip()]


def _folds(block: Directive) -> bool:
    """Does the site fold this box (a sphinx-design dropdown, or an admonition with ``:class: dropdown``)?"""
    folding = block.name == "dropdown" or "dropdown" in block.options.get("class", "").split()
    return folding and (block.name in ADMONITIONS or block.name in ("admonition", "dropdown"))


def _split_at_solutions(source: str) -> list[str | Directive]:
    """A Markdown cell's text, cut at ``{solution-start}``/``{solution-end}``/``{solution}`` blocks."""
    pieces: list[str | Directive] = []
    text: list[str] = []
    for block in parse_blocks(source):
        if isinstance(block, Directive) and (block.name in SOLUTION_BLOCKS or _folds(block)):
            if text:
                pieces.append("\n".join(text))
                text = []
            pieces.append(block)
        else:
            text.append(_unparse(block) if isinstance(block, Directive) else block)
    if text:
        pieces.append("\n".join(text))
    return pieces


def _unparse(block: Directive) -> str:
    fence = "`" * (3 + _fence_depth(block.body))
    options = "".join(f":{k}: {v}\n" for k, v in block.options.items())
    return f"{fence}{{{block.name}}} {block.arg}\n{options}{block.body}\n{fence}"


def _fence_depth(body: str) -> int:
    longest = max((len(m[1]) for m in re.finditer(r"^ {0,3}(`{3,})", body, re.M)), default=0)
    return max(0, longest - 2)


def _quote(title: str, body: str) -> str:
    text = f"{title}\n\n{body}".strip("\n") if title else body
    return "\n".join(f"> {line}".rstrip() for line in text.split("\n"))


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        try:
            return float(text)
        except ValueError:
            return text


def _select_lines(lines: list[str], spec: str) -> list[str]:
    chosen: list[str] = []
    for part in spec.split(","):
        first, dash, last = part.strip().partition("-")
        start = int(first) if first else 1
        stop = int(last) if last else (len(lines) if dash else start)
        chosen.extend(lines[start - 1 : stop])
    return chosen




def _number_cells(nb: nbformat.NotebookNode) -> None:
    for i, cell in enumerate(nb.cells):
        cell.id = f"cell-{i}"  # stable ids, so regenerating an unchanged chapter changes nothing
        if cell.cell_type == "markdown" and cell.metadata.get("jp-MarkdownHeadingCollapsed"):
            cell.metadata["id"] = cell.id  # Colab names collapsed sections by this id


def _glue_record(output: Any) -> bool:
    return bool(output.get("metadata", {}).get("scrapbook", {}).get("mime_prefix"))


def glued_values(nb: nbformat.NotebookNode) -> dict[str, str]:
    """``name -> text/plain`` of every value an executed notebook glued (myst-nb's outputs)."""
    values: dict[str, str] = {}
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            meta = output.get("metadata", {}).get("scrapbook", {})
            if "name" in meta:
                prefix = meta.get("mime_prefix", "application/papermill.record/")
                text = output.get("data", {}).get(prefix + "text/plain")
                if text is not None:
                    values[meta["name"]] = "".join(text) if isinstance(text, list) else text
    return values


def convert(chapter: Path, nb: nbformat.NotebookNode | None = None, out_dir: Path | None = None,
            values: Mapping[str, str] | None = None) -> nbformat.NotebookNode:
    """Convert ``chapter`` (``book/NN-slug.md``) for the notebook front-ends.

    ``nb`` is the chapter's notebook if it has been executed (its outputs are kept, and the values
    it glued are written into the text); otherwise the chapter is read with jupytext. ``out_dir``:
    the folder the notebook will be saved in (for image paths; default ``notebooks/``).
    ``values``: the glued values (``name -> text/plain``) where the notebook no longer holds them
    (myst-nb moves them to ``<page>.glue.json``).
    """
    import jupytext

    executed = nb is not None
    nb = nb if executed else jupytext.read(chapter)
    if values is None and executed:
        values = glued_values(nb)
    converter = Converter(chapter, values=values, out_dir=out_dir)
    out = converter.convert(nb)
    if converter.formats and not executed:
        out.metadata["explorables"] = {"glue_formats": converter.formats}
    return out


def myst_left(nb: nbformat.NotebookNode) -> list[str]:
    """Markdown cells of ``nb`` that still hold MyST-only syntax (which front-ends show raw).

    Code blocks and inline code are skipped: there, MyST syntax is shown as code on purpose.
    """
    return [text for text in texts(nb) if MYST_ONLY.search(_without_code(text))]


def texts(nb: nbformat.NotebookNode) -> list[str]:
    """The reader's text of ``nb``: its Markdown cells and the saved text of its live text cells."""
    found = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            found.append(cell.source)
        elif "live-text" in cell.metadata.get("tags", []):
            found.extend("".join(o.get("data", {}).get("text/markdown", "")) for o in cell.get("outputs", []))
    return found


def _without_code(text: str) -> str:
    kept, fence = [], None
    for line in text.split("\n"):
        match = CODE_FENCE.match(line)
        if fence:
            if match and match["fence"][0] == fence[0] and len(match["fence"]) >= len(fence) and not line.strip(
            ).strip(fence[0]):
                fence = None
        elif match and not DIRECTIVE.match(line):
            fence = match["fence"]
        else:
            kept.append(line)
    return re.sub(r"(?<!\})`[^`\n]*`", "", "\n".join(kept))


def chapters(root: Path = ROOT) -> list[Path]:
    return sorted((root / "book").glob("[0-9][0-9]-*.md"))

