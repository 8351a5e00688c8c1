"""What makes a submission inert in the pages instructors and students open.

nbconvert's :class:`~nbconvert.preprocessors.SanitizeHTML` cleans the HTML a
submission writes (raw HTML in Markdown, HTML outputs) with bleach, whose URL
schemes are an allow-list.  Two routes around it are closed here:

* :class:`SafeLinksExporter`: Markdown's own links and images (``[x](URL)``,
  ``![x](URL)``, ``<URL>``, reference links) are made by nbconvert's renderer,
  which keeps every scheme.  This exporter renders Markdown with mistune's
  URL check on and an allow-list of http, https and mailto (plus relative
  links, and data:image/png, jpeg, gif or webp for images): anything else,
  however spelled (``JaVaScRiPt:``, ``&#106;avascript:``, ``java<TAB>script:``),
  becomes ``#harmful-link``.  :func:`safe_links_in_every_html_export` does the
  same for the formgrader's pages.
* :class:`SanitizeSubmission`: SanitizeHTML, plus an output's metadata cut to
  what the templates may read (numeric width and height, ``unconfined``,
  ``alt``): nbconvert writes ``width={{ width }}`` unquoted and
  ``src="{{ filenames[...] }}"``, so any other value could add an attribute or
  a script URL to an image.
"""

from __future__ import annotations

from jinja2 import pass_context
from nbconvert.exporters import HTMLExporter
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from nbconvert.preprocessors.sanitize import SanitizeHTML


class SafeLinksRenderer(IPythonRenderer):
    """nbconvert's Markdown renderer with mistune's URL check on, for an allow-list of schemes."""

    SAFE_PROTOCOLS = ("http:", "https:", "mailto:")

    def __init__(self, **kwargs):
        super().__init__(**kwargs, allow_harmful_protocols=False)


class SafeLinksExporter(HTMLExporter):
    """HTMLExporter whose ``markdown2html`` filter renders with :class:`SafeLinksRenderer`."""

    @pass_context
    def markdown2html(self, context, source):
        cell = context.get("cell", {})
        renderer = SafeLinksRenderer(
            escape=False, attachments=cell.get("attachments", {}), embed_images=self.embed_images,
            path=context.get("resources", {}).get("metadata", {}).get("path", ""),
            anchor_link_text=self.anchor_link_text, exclude_anchor_links=self.exclude_anchor_links,
            **self.lexer_options)
        return MarkdownWithMath(renderer=renderer).render(source)


def safe_links_in_every_html_export():
    """Every HTMLExporter of this process renders Markdown with :class:`SafeLinksRenderer`.

    For the formgrader: it builds a plain HTMLExporter (no setting names the
    class) whose template renders the autograded notebook's Markdown as it is.
    The course's ``nbgrader_config.py`` calls this, so the formgrader, and
    nbgrader's commands, apply the allow-list too; the grading workers, which
    do not run that file, use :class:`SafeLinksExporter` by configuration.
    """
    import nbconvert.exporters.html

    nbconvert.exporters.html.IPythonRenderer = SafeLinksRenderer


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def safe_output_metadata(metadata: dict) -> dict:
    """``{mimetype: {...}}`` with only a numeric width and height, ``unconfined`` and a text ``alt``."""
    kept = {}
    for mimetype, info in metadata.items():
        if isinstance(info, dict):
            kept[mimetype] = {key: value for key, value in info.items()
                              if (key in ("width", "height") and _number(value))
                              or (key == "unconfined" and value is True)
                              or (key == "alt" and isinstance(value, str))}
    return kept


class SanitizeSubmission(SanitizeHTML):
    """SanitizeHTML, and output metadata that cannot add to the markup (see the module's docstring)."""

    def sanitize_code_outputs(self, outputs):
        for output in outputs:
            if "metadata" in output:
                output["metadata"] = safe_output_metadata(output["metadata"])
        return super().sanitize_code_outputs(outputs)
