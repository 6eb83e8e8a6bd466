"""Manifest entries that try to leave the corpus folder are refused, naming
the manifest line; a refused manifest changes nothing already built."""

from __future__ import annotations

import os
import re

import pytest
from click.testing import CliRunner

from corpus_kit import GOOD_HTML, PageSpec, db_fingerprint, good_corpus, write_corpus
from pipeline.cli import main
from pipeline.corpus import load_manifest, read_snapshot
from pipeline.errors import CorpusError


def _corpus_with(tmp_path, **fields):
    """A corpus whose second row (manifest line 3) has ``fields``; the first is a good page.
    The second row's page is never written (by default it names the first page)."""
    fields = {"id": "bad-page", "content": "", "path": "pages/good-page.html", **fields}
    return write_corpus(tmp_path / "c", [PageSpec("good-page", GOOD_HTML), PageSpec(**fields)])


@pytest.mark.parametrize("fields, message", [
    ({"id": "../../etc/passwd"}, "source id '../../etc/passwd' is not of the form"),
    ({"id": "/etc/passwd"}, "source id '/etc/passwd' is not of the form"),
    ({"id": "Bad Id"}, "source id 'Bad Id' is not of the form"),
    ({"path": "../../etc/passwd"}, "bad-page, manifest.tsv:3: snapshot path '../../etc/passwd' leaves the corpus folder"),
    ({"path": "pages/../../outside.html"}, "snapshot path 'pages/../../outside.html' leaves the corpus folder"),
    ({"path": "/etc/passwd"}, "snapshot path '/etc/passwd' must be relative to the corpus folder"),
    ({"path": "\\\\server\\share\\x.html"}, "must be relative to the corpus folder"),
    ({"path": "pages/a\x00b.html"}, "contains a NUL character"),
    ({"id": "good-page"}, "duplicate source id 'good-page'"),
])
def test_bad_manifest_entries_are_refused(tmp_path, fields, message):
    corpus = _corpus_with(tmp_path, **fields)
    with pytest.raises(CorpusError) as err:
        load_manifest(corpus)
    assert message in str(err.value) and "manifest.tsv:3" in str(err.value)


def test_symlinks_out_of_the_tree_are_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.html").write_text(GOOD_HTML, encoding="utf-8")
    corpus = _corpus_with(tmp_path, path="pages/link.html")
    os.symlink(outside / "secret.html", corpus / "pages/link.html")
    with pytest.raises(CorpusError, match=r"manifest.tsv:3: snapshot path 'pages/link.html' leaves the corpus folder"):
        load_manifest(corpus)

    corpus = _corpus_with(tmp_path / "2", path="pages/out/secret.html")  # a folder symlink on the way
    os.symlink(outside, corpus / "pages/out")
    with pytest.raises(CorpusError, match=r"'pages/out/secret.html' leaves the corpus folder"):
        load_manifest(corpus)


def test_symlink_inside_the_tree_is_followed(tmp_path):
    corpus = _corpus_with(tmp_path, path="pages/alias.html")
    os.symlink(corpus / "pages/good-page.html", corpus / "pages/alias.html")
    bad = load_manifest(corpus)[1]
    assert bad.snapshot == (corpus / "pages/good-page.html").resolve()
    assert read_snapshot(bad) == GOOD_HTML.encode("utf-8")


def test_manifest_that_is_not_utf8_is_refused(tmp_path):
    corpus = good_corpus(tmp_path / "c")
    (corpus / "manifest.tsv").write_bytes((corpus / "manifest.tsv").read_bytes() + "notes é\n".encode("latin-1"))
    with pytest.raises(CorpusError, match=r"manifest.tsv, byte \d+: manifest is not UTF-8"):
        load_manifest(corpus)


def test_refused_manifest_changes_nothing_built(tmp_path):
    corpus = good_corpus(tmp_path / "c")
    db, engine = tmp_path / "r.duckdb", tmp_path / "e.py"
    args = ["build", "--corpus", str(corpus), "--db", str(db), "--engine-out", str(engine)]
    assert CliRunner().invoke(main, args).exit_code == 0
    before, module = db_fingerprint(db), engine.read_bytes()
    with (corpus / "manifest.tsv").open("a", encoding="utf-8") as fh:
        fh.write("\t".join(PageSpec("evil", "", path="../../../../etc/passwd").row()) + "\n")
    out = CliRunner().invoke(main, args)
    assert out.exit_code == 1
    assert ("Error: [corpus] evil, manifest.tsv:4: snapshot path '../../../../etc/passwd' leaves the corpus folder"
            in out.output)
    assert db_fingerprint(db) == before and engine.read_bytes() == module


@pytest.mark.parametrize("fields, message", [
    ({"language": "ja"}, "[corpus] bad-page, manifest.tsv:3: language 'ja' is not one of ['en', 'zh']"),
    ({"format": "pdf"}, "[corpus] bad-page, manifest.tsv:3: format 'pdf' is not one of ['html', 'markdown', 'pdf-text', 'text']"),
    ({"format": ""}, "[corpus] bad-page, manifest.tsv:3: format '' is not one of ['html', 'markdown', 'pdf-text', 'text']"),
    ({"script": "Hanz"}, "[corpus] bad-page, manifest.tsv:3: script 'Hanz' is not one of ('', 'Hans', 'Hant') for "
                         "language 'zh' ('': detect it)"),
    ({"language": "en", "script": "Hant"}, "[corpus] bad-page, manifest.tsv:3: script 'Hant' is not one of "
                                           "('', 'Latn') for language 'en' ('': detect it)"),
    ({"region": "Taiwan"}, "[corpus] bad-page, manifest.tsv:3: region 'Taiwan' is not one of "
                           "['CN', 'HK', 'MO', 'MY', 'SG', 'TW'] or empty"),
])
def test_a_row_the_pipeline_cannot_read_fails_that_source_alone(tmp_path, fields, message):
    corpus = _corpus_with(tmp_path, **fields)
    assert [s.id for s in load_manifest(corpus)] == ["good-page", "bad-page"]
    out = CliRunner().invoke(main, ["build", "--corpus", str(corpus), "--db", str(tmp_path / "r.duckdb"),
                                    "--engine-out", str(tmp_path / "e.py")])
    assert out.exit_code == 1
    assert [line for line in out.output.splitlines() if line.startswith("error:")] == [f"error: {message}"]
    assert "sources          2 (1 built)" in out.output


def _manifest_with_line(tmp_path, line: str):
    corpus = write_corpus(tmp_path / "c", [PageSpec("good-page", GOOD_HTML)])
    with (corpus / "manifest.tsv").open("a", encoding="utf-8") as fh:
        fh.write(line + "\n")
    return corpus


@pytest.mark.parametrize("line, message", [
    ("bad-page\thttps://example.org/p\tzh", "manifest.tsv:3: row has 3 of the header's 10 tab-separated fields "
     "(id, url, language; script, region, format, licence, path missing): fields must be separated by tabs"),
    ("bad-page https://example.org/p zh Hans CN html test pages/good-page.html no note",
     "manifest.tsv:3: row has 1 of the header's 10 tab-separated fields (id; url, "),
    ("\t".join(PageSpec("bad-page", "", path="pages/good-page.html").row()) + "\tstray\tmore",
     "manifest.tsv:3: row has 12 tab-separated fields, the header 10 (a tab inside a field?); first extra value 'stray'"),
])
def test_a_row_with_too_few_or_too_many_fields_is_refused_naming_them(tmp_path, line, message):
    with pytest.raises(CorpusError, match=re.escape(message)):
        load_manifest(_manifest_with_line(tmp_path, line))


@pytest.mark.parametrize("extra_lines", [["   "], ["# a comment\tline"], ["", "\t\t"]])
def test_blank_and_comment_lines_are_skipped_and_later_lines_keep_their_numbers(tmp_path, extra_lines):
    corpus = write_corpus(tmp_path / "c", [PageSpec("good-page", GOOD_HTML)])
    with (corpus / "manifest.tsv").open("a", encoding="utf-8") as fh:
        fh.write("\n".join(extra_lines) + "\n" + "bad page\n")
    with pytest.raises(CorpusError, match=f"manifest.tsv:{3 + len(extra_lines)}: row has 1 of"):
        load_manifest(corpus)


def test_a_row_without_its_trailing_optional_fields_is_read(tmp_path):
    row = PageSpec("bad-page", "", path="pages/good-page.html").row()
    for kept in (9, 8):  # notes trimmed; fetch and notes trimmed
        [_, short] = load_manifest(_manifest_with_line(tmp_path / str(kept), "\t".join(row[:kept])))
        assert (short.id, short.fetch, short.notes, short.problem) == ("bad-page", False, "", "")


def test_a_trailing_empty_field_and_a_fetch_typo(tmp_path):
    row = PageSpec("bad-page", "", path="pages/good-page.html").row()
    assert [s.id for s in load_manifest(_manifest_with_line(tmp_path / "a", "\t".join(row) + "\t"))] == [
        "good-page", "bad-page"]
    row[8] = "sometimes"
    [_, bad] = load_manifest(_manifest_with_line(tmp_path / "b", "\t".join(row)))
    assert bad.problem == "manifest.tsv:3: fetch 'sometimes' is not yes or no"
