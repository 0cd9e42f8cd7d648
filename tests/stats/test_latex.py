"""The report's LaTeX tables (stats/latex/) in the layouts of Tao et al. (2018) Table 2 and Gupta et al. (2019)
Tables 4 and 5: the whole correlation table of a hand-made document as an exact string, then each rule on
its own (bold, p-values, n/a, block order, names, escaping), and a document built by the real builder."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from stats.latex import (
    correlation_table_latex,
    diversity_latex,
    format_coefficient,
    format_p_value,
    latex_escape,
    metric_label,
    report_latex,
    single_vs_multi_latex,
)
from stats.report.builder import build_report
from stats.report.document_types import ReportDocument
from stats.report.types import (
    AnnotatorInfo,
    DiversityInputs,
    QuestionInputs,
    ReportInputs,
    ReportOptions,
    ResponseInfo,
    SignatureInputs,
)
from tests.correlation.report_documents import QUESTION, human_row, metric_row, paper_document
from tests.latex_compile import compiled_log

NASTY = r"50%_a&b #1 {x} ~y ^z \cmd"
NASTY_ESCAPED = r"50\%\_a\&b \#1 \{x\} \textasciitilde{}y \textasciicircum{}z \textbackslash{}cmd"

GOLDEN_TABLE = r"""\begin{table*}[t]
\centering
\small
\begin{tabular}{llcc}
\toprule
\multicolumn{2}{l}{Metrics} & Pearson ($p$-value) & Spearman ($p$-value) \\
\midrule
Inter-annotator & Human (Avg) & 0.4927 ($< 0.01$) & 0.4981 ($< 0.01$) \\
 & Human (Max) & 0.5931 ($< 0.01$) & 0.5926 ($< 0.01$) \\
\midrule
Referenced & BLEU-2 (single) & -0.0006 (0.9914) & 0.0546 (0.3464) \\
 & BLEU-2 (multi) & 0.2910 ($< 0.01$) & 0.2077 ($< 0.01$) \\
 & BLEU-4 & n/a & n/a \\
 & ROUGE-L & 0.2840 ($< 0.01$) & 0.2696 (0.0100) \\
\midrule
Unreferenced & NN scorer ($s_U$) & 0.4278 ($< 0.01$) & 0.4338 ($< 0.01$) \\
\midrule
Hybrid & RUBER min & -0.6000 ($< 0.01$) & -0.5800 ($< 0.01$) \\
 & RUBER geometric mean & 0.4559 ($< 0.01$) & 0.4771 ($< 0.01$) \\
 & RUBER arithmetic mean & \textbf{0.4594} ($< 0.01$) & \textbf{0.4906} ($< 0.01$) \\
\midrule
Other & my-metric & 0.1000 (0.2777) & 0.2000 (0.0287) \\
\bottomrule
\end{tabular}
\caption{Correlation between automatic metrics and human scores: study ``Douban retrieval'', question ``appropriateness'', 120 replies with a human score. Human (Avg): each rater against the mean of the others, averaged over 9 raters; Human (Max): the best rater. Filter: raters whose agreement with the others (weighted Cohen's kappa) is under 0.2 (the study's setting), and raters the researcher excluded, are left out; 14 of 360 ratings removed (2 raters). $p$-values in parentheses ($< 0.01$ below 0.01); the best metric in each column in bold. Replies with no score of the metric are left out of its row: RUBER min ($n = 100$). Not computable (n/a): BLEU-4, constant metric scores.}
\label{tab:douban-retrieval-appropriateness-correlation}
\end{table*}
"""

GOLDEN_SINGLE_VS_MULTI = r"""\begin{table*}[t]
\centering
\small
\begin{tabular}{lcccccccc}
\toprule
 & \multicolumn{4}{c}{Single reference} & \multicolumn{4}{c}{Multiple references} \\
\cmidrule(lr){2-5} \cmidrule(lr){6-9}
Metrics & Spearman & $p$-value & Pearson & $p$-value & Spearman & $p$-value & Pearson & $p$-value \\
\midrule
BLEU-1 & 0.0241 & 0.591 & 0.1183 & 0.008 & 0.1572 & $< 0.001$ & 0.2190 & n/a \\
BLEU-2 & \textbf{0.0250} & 0.577 & \textbf{0.1803} & $< 0.001$ & \textbf{0.2077} & 0.002 & \textbf{0.2910} & $< 0.001$ \\
\bottomrule
\end{tabular}
\caption{Correlation of each metric with the human scores when evaluated with a single reference (the original reply) and with multiple references (the best-matching reference of each context): study ``Douban retrieval'', question ``appropriateness'', 120 replies with a human score. $p$-values under 0.001 are shown as $< 0.001$. n/a: not computable (too few replies, or constant scores).}
\label{tab:douban-retrieval-appropriateness-single-vs-multi}
\end{table*}
"""

GOLDEN_DIVERSITY = r"""\begin{table}[t]
\centering
\small
\begin{tabular}{lcccc}
\toprule
Metric & Spearman & $p$-value & Pearson & $p$-value \\
\midrule
Distinct-1 & 0.0204 & 0.647 & 0.0465 & 0.299 \\
Self BLEU-2$^\dagger$ & -0.1534 & $< 0.001$ & -0.1251 & 0.005 \\
Recall BLEU-2 & \textbf{0.2052} & $< 0.001$ & \textbf{0.2469} & $< 0.001$ \\
\bottomrule
\end{tabular}
\caption{Correlation of diversity metrics with the human diversity score (mean number of different meanings among the appropriate replies, over raters), over 40 (system, context) pairs and 120 judgments: study ``Douban retrieval''. $^\dagger$Correlated as $1 - x$, since a lower value means more diverse. $p$-values under 0.001 are shown as $< 0.001$.}
\label{tab:douban-retrieval-diversity}
\end{table}
"""


def _table_lines(table: str) -> list[str]:
    return table.splitlines()


def _line_of(table: str, label: str) -> str:
    (line,) = [line for line in table.splitlines() if f"& {label} &" in line]
    return line


# -- the whole tables ---------------------------------------------------------------------------------------


def test_the_correlation_table_of_a_small_document_is_exactly_the_papers_layout() -> None:
    assert correlation_table_latex(paper_document(), QUESTION) == GOLDEN_TABLE


def test_the_single_vs_multi_table_is_seed_003_table_4() -> None:
    assert single_vs_multi_latex(paper_document(), QUESTION) == GOLDEN_SINGLE_VS_MULTI


def test_the_diversity_table_is_seed_003_table_5() -> None:
    assert diversity_latex(paper_document()) == GOLDEN_DIVERSITY


def test_tables_without_data_are_empty_strings() -> None:
    document = paper_document()
    assert correlation_table_latex(document, "no-such-question") == ""
    assert single_vs_multi_latex(document, "no-such-question") == ""
    document["single_vs_multi"] = []
    document["diversity"] = None
    assert single_vs_multi_latex(document, QUESTION) == ""
    assert diversity_latex(document) == ""
    document["diversity"] = {"pairs": 0, "judgments": 0, "human_score": "meanings", "rows": []}
    assert diversity_latex(document) == ""


def test_the_report_holds_every_table_under_a_comment_header() -> None:
    document = paper_document()
    text = report_latex(document, study_name="Douban retrieval")
    header = text.split("\n\n", 1)[0].splitlines()
    assert header == [
        '% Correlation report of study "Douban retrieval" (dialeval)',
        "% data version 42; code version 0.1.0+git.1a2b3c4d5e6f; document version 2",
        "% options: filter=study, normalise=none, resamples=1000, seed=20180201",
        r"% needs \usepackage{booktabs} in the preamble",
    ]
    assert text == "\n".join(header) + "\n\n" + "\n".join(
        [GOLDEN_TABLE, GOLDEN_SINGLE_VS_MULTI, GOLDEN_DIVERSITY]
    )


def test_the_report_takes_each_question_in_turn() -> None:
    document = paper_document()
    document["questions"].append(
        {
            "name": "fluency",
            "scale": [1, 5],
            "responses": 30,
            "human_scored": 30,
            "ratings": 90,
            "imported_means": 0,
            "gold_values": 0,
            "left_out": {"no_human_score": 0},
        }
    )
    document["rows"].append(
        metric_row("bleu-1", "single", "Referenced", 0.3, 0.001, 0.2, 0.3, question="fluency")
    )
    text = report_latex(document)
    labels = [line for line in text.splitlines() if line.startswith(r"\label{")]
    assert labels == [
        r"\label{tab:douban-retrieval-appropriateness-correlation}",
        r"\label{tab:douban-retrieval-appropriateness-single-vs-multi}",
        r"\label{tab:douban-retrieval-fluency-correlation}",
        r"\label{tab:douban-retrieval-diversity}",
    ]
    fluency = text.split(r"\label{tab:douban-retrieval-appropriateness-single-vs-multi}")[1]
    assert "question ``fluency'', 30 replies" in fluency
    assert "BLEU-2" not in fluency.split(r"\label{tab:douban-retrieval-fluency-correlation}")[0]


def test_a_report_with_no_questions_says_so() -> None:
    document = paper_document()
    document["questions"] = []
    document["diversity"] = None
    assert report_latex(document).endswith("% no tables: the report has no rows yet\n")


# -- the rules, one by one ----------------------------------------------------------------------------------


def test_the_best_value_is_bold_among_metrics_only_and_by_signed_value() -> None:
    table = correlation_table_latex(paper_document(), QUESTION)
    assert table.count(r"\textbf{") == 2
    assert r"\textbf{0.4594}" in _line_of(table, "RUBER arithmetic mean")
    assert r"\textbf{0.4906}" in _line_of(table, "RUBER arithmetic mean")
    # Human (Max) is higher, and ruber-min's -0.6 is larger in absolute value: neither is the best metric.
    assert r"\textbf" not in _line_of(table, "Human (Max)")
    assert r"\textbf" not in _line_of(table, "RUBER min")


def test_values_equal_as_printed_are_bold_together_and_a_lone_metric_is_not_bold() -> None:
    document = paper_document()
    document["rows"] = [
        metric_row("bleu-1", "single", "Referenced", 0.45231, 0.001, 0.1, 0.5),
        metric_row("bleu-2", "single", "Referenced", 0.45229, 0.001, None, None, note="not computable: x"),
        metric_row("bleu-3", "single", "Referenced", 0.30000, 0.001, None, None, note="not computable: x"),
    ]
    table = correlation_table_latex(document, QUESTION)
    assert r"\textbf{0.4523}" in _line_of(table, "BLEU-1")
    assert r"\textbf{0.4523}" in _line_of(table, "BLEU-2")
    assert r"\textbf" not in _line_of(table, "BLEU-3")
    assert r"\textbf{0.1000}" not in table  # the only Spearman value has nothing to beat


def test_p_values_under_001_read_less_than_001() -> None:
    assert format_p_value(0.0099) == "$< 0.01$"
    assert format_p_value(0.0) == "$< 0.01$"
    assert format_p_value(0.01) == "0.0100"
    assert format_p_value(0.99136) == "0.9914"
    assert format_p_value(None) == "n/a"
    assert format_p_value(0.0009, below=0.001, digits=3) == "$< 0.001$"
    assert format_p_value(0.0023, below=0.001, digits=3) == "0.002"
    assert format_coefficient(-0.00061) == "-0.0006"
    assert format_coefficient(-0.00001) == "0.0000"
    assert format_coefficient(float("nan")) == "n/a"
    table = correlation_table_latex(paper_document(), QUESTION)
    assert "0.2840 ($< 0.01$)" in _line_of(table, "ROUGE-L")
    assert "-0.0006 (0.9914)" in _line_of(table, "BLEU-2 (single)")


def test_a_statistic_that_is_none_reads_na_and_the_caption_says_why() -> None:
    document = paper_document()
    document["rows"].append(metric_row("meteor", "single", "Referenced", 0.25, None, 0.2, 0.04))
    document["human"][0] = human_row("Human (Avg)", None, None, None, None, note="not computable: one rater")
    table = correlation_table_latex(document, QUESTION)
    assert _line_of(table, "BLEU-4").endswith("& BLEU-4 & n/a & n/a \\\\")
    assert "0.2500 (n/a)" in _line_of(table, "METEOR")
    assert _line_of(table, "Human (Avg)").endswith("& n/a & n/a \\\\")
    assert "Not computable (n/a): Human (Avg), one rater; BLEU-4, constant metric scores." in table


def test_blocks_come_in_a_fixed_order_whatever_the_documents_order() -> None:
    document = paper_document()
    document["rows"].append(metric_row("zz-custom", "none", "Later", 0.1, 0.5, 0.1, 0.5))
    random.Random(3).shuffle(document["rows"])
    lines = _table_lines(correlation_table_latex(document, QUESTION))
    starts = [
        next(i for i, line in enumerate(lines) if line.startswith(block))
        for block in (
            r"Inter-annotator",
            r"Referenced",
            "Unreferenced &",
            r"Hybrid",
            "Other &",
            "Later &",  # a block the app does not know comes last
        )
    ]
    assert starts == sorted(starts)
    assert all(lines[start - 1] == r"\midrule" for start in starts)
    metric_lines = [line for line in lines if line.count(" & ") == 3 and "Human" not in line]
    assert [line.split(" & ")[1] for line in metric_lines][:4] == [
        "BLEU-2 (single)",
        "BLEU-2 (multi)",
        "BLEU-4",
        "ROUGE-L",
    ]


def test_kendall_is_a_column_on_request() -> None:
    document = paper_document()
    document["rows"] = [
        metric_row("bleu-1", "single", "Referenced", 0.2, 0.001, 0.1, 0.5, kendall=0.15, kendall_p=0.02),
        metric_row("bleu-2", "single", "Referenced", 0.1, 0.001, 0.2, 0.5, kendall=0.05, kendall_p=0.3),
    ]
    assert "Kendall" not in correlation_table_latex(document, QUESTION)
    table = correlation_table_latex(document, QUESTION, kendall=True)
    assert r"\begin{tabular}{llccc}" in table
    assert r"Pearson ($p$-value) & Spearman ($p$-value) & Kendall ($p$-value) \\" in table
    assert _line_of(table, "BLEU-1").endswith(r"& \textbf{0.1500} (0.0200) \\")
    assert _line_of(table, "Human (Avg)").endswith(r"& --- \\")  # not computed for humans


def test_signatures_that_read_alike_get_what_tells_them_apart() -> None:
    document = paper_document()
    document["rows"] = [
        metric_row("bleu-2", "single", "Referenced", 0.2, 0.001, 0.1, 0.5, signature="bleu-2|refs:single|tok:en-v1"),
        metric_row("bleu-2", "single", "Referenced", 0.3, 0.001, 0.1, 0.5, signature="bleu-2|refs:single|tok:none"),
        metric_row("bleu-2", "multi", "Referenced", 0.4, 0.001, 0.1, 0.5, signature="bleu-2|refs:multi|tok:none"),
        metric_row(
            "ruber-gmean", "single", "Hybrid", 0.4, 0.001, 0.1, 0.5,
            signature="ruber-gmean|model:" + "a" * 64 + "|refs:single",
        ),
        metric_row(
            "ruber-gmean", "single", "Hybrid", 0.4, 0.001, 0.1, 0.5,
            signature="ruber-gmean|model:" + "b" * 64 + "|refs:single",
        ),
    ]  # fmt: skip
    table = correlation_table_latex(document, QUESTION)
    names = [
        line.split(" & ")[1]
        for line in table.splitlines()
        if line.endswith("\\\\") and "Human" not in line and "Metrics" not in line
    ]
    assert names == [
        "BLEU-2 (single) (tok:en-v1)",
        "BLEU-2 (single) (tok:none)",
        "BLEU-2 (multi)",
        "RUBER geometric mean (model:aaaaaaaaaaaa)",
        "RUBER geometric mean (model:bbbbbbbbbbbb)",
    ]


@pytest.mark.parametrize(
    ("name", "label"),
    [
        ("bleu-1", "BLEU-1"),
        ("bleu-4", "BLEU-4"),
        ("rouge-l", "ROUGE-L"),
        ("meteor", "METEOR"),
        ("embedding-average", "Embedding Average"),
        ("vector-extrema", "Vector Extrema"),
        ("greedy-matching", "Greedy Matching"),
        ("ruber-referenced", r"Vector pool ($s_R$)"),
        ("vector-pool-unreferenced", "Vector pool"),
        ("ruber-unreferenced", r"NN scorer ($s_U$)"),
        ("ruber-min", "RUBER min"),
        ("ruber-max", "RUBER max"),
        ("ruber-gmean", "RUBER geometric mean"),
        ("ruber-amean", "RUBER arithmetic mean"),
        ("bert-ruber-referenced", r"BERT-RUBER $s_R$"),
        ("bert-ruber-unreferenced", r"BERT-RUBER $s_U$"),
        ("bert-ruber-unreferenced:bert-max-ce", r"BERT-RUBER $s_U$ (BERT, max pooling, cross-entropy)"),
        ("bert-ruber-unreferenced:word2vec-rnn-ranking", r"BERT-RUBER $s_U$ (word2vec, Bi-RNN, ranking)"),
        ("bert-ruber-gmean", "BERT-RUBER geometric mean"),
        ("distinct-2", "Distinct-2"),
        ("self-bleu-4", "Self BLEU-4"),
        ("recall-bleu-2", "Recall BLEU-2"),
        ("recall-vector-extrema", "Recall Vector Extrema"),
        ("corpus-bleu", "Corpus BLEU"),
        ("my_metric", r"my\_metric"),  # unknown: the raw name, escaped
        ("bert-ruber-unreferenced:gpt-max-ce", r"bert-ruber-unreferenced:gpt-max-ce"),
    ],
)
def test_metric_names_read_as_in_the_papers(name: str, label: str) -> None:
    assert metric_label(name) == label


# -- escaping -----------------------------------------------------------------------------------------------


def test_latex_escape_escapes_every_special_character() -> None:
    assert latex_escape(NASTY) == NASTY_ESCAPED
    assert latex_escape("a<b>c|d") == r"a\textless{}b\textgreater{}c\textbar{}d"
    assert latex_escape("two\n\nparagraphs\r\tend") == "two  paragraphs  end"  # no \par in a caption
    assert latex_escape("Ünïcode 中文") == "Ünïcode 中文"


def test_every_outside_text_in_the_tables_is_escaped() -> None:
    document = paper_document()
    document["questions"][0]["name"] = NASTY
    for section in ("rows", "human", "filter", "single_vs_multi"):
        for entry in document[section]:
            entry["question"] = NASTY
    document["filter"][0]["description"] = NASTY
    document["rows"].append(metric_row(NASTY, "none", NASTY, 0.1, 0.5, 0.1, 0.5, question=NASTY))
    document["rows"][5]["note"] = "not computable: " + NASTY
    assert document["diversity"] is not None
    document["diversity"]["rows"].append(
        {"metric": NASTY, "inverted": False, "n": 3, "spearman": None, "spearman_p": None,
         "pearson": None, "pearson_p": None, "note": NASTY},
    )  # fmt: skip

    table = correlation_table_latex(document, NASTY, study_name=NASTY)
    assert f"study ``{NASTY_ESCAPED}'', question ``{NASTY_ESCAPED}''" in table
    assert f"Filter: {NASTY_ESCAPED};" in table
    assert f"{NASTY_ESCAPED} & {NASTY_ESCAPED} & 0.1000 (0.5000) & 0.1000 (0.5000) \\\\" in table
    assert f"BLEU-4, {NASTY_ESCAPED}." in table
    assert r"\label{tab:50-a-b-1-x-y-z-cmd-50-a-b-1-x-y-z-cmd-correlation}" in table
    pairs = single_vs_multi_latex(document, NASTY, study_name=NASTY)
    assert f"study ``{NASTY_ESCAPED}'', question ``{NASTY_ESCAPED}''" in pairs
    diversity = diversity_latex(document, study_name=NASTY)
    assert f"{NASTY_ESCAPED} & n/a & n/a & n/a & n/a \\\\" in diversity
    assert f"Not computable (n/a): {NASTY_ESCAPED}, {NASTY_ESCAPED}." in diversity
    for text in (table, pairs, diversity):
        without_escapes = text.replace(NASTY_ESCAPED, "")
        assert NASTY not in text
        assert "%" not in without_escapes  # a stray % would comment out the rest of a line
        assert "#" not in without_escapes


def test_a_study_name_cannot_end_the_comment_header() -> None:
    document = paper_document()
    document["code_version"] = "1.0\n\\input{/etc/passwd}"
    text = report_latex(document, study_name="evil\n\\def\\x{}")
    header = text.split("\n\n", 1)[0].splitlines()
    assert len(header) == 4
    assert all(line.startswith("% ") for line in header)
    assert "\\input" not in text.split("\n\n", 1)[1]


def test_a_study_name_without_latin_letters_still_gets_a_label() -> None:
    document = paper_document()
    table = correlation_table_latex(document, QUESTION, study_name="多参考")
    assert r"\label{tab:study-7-appropriateness-correlation}" in table
    assert "study ``多参考''" in table


# -- a document from the real builder ------------------------------------------------------------------------


def _built_document() -> ReportDocument:
    rng = random.Random(5)
    responses = {
        i: ResponseInfo(text=f"reply {i}", system="ab"[i % 2], context=f"c{i // 2}") for i in range(1, 41)
    }
    annotators = {
        k: AnnotatorInfo(key=k, pseudonym=f"rater-{k}", identity_known=True, inclusion="auto", agreement=0.5)
        for k in range(4)
    }
    quality = {i: rng.randint(0, 2) for i in responses}
    ratings = tuple(
        (k, i, min(2, max(0, quality[i] + rng.choice((-1, 0, 0, 1))))) for k in annotators for i in responses
    )
    signatures = (
        SignatureInputs(1, "bleu-2", "bleu-2|refs:single", "single", "Referenced", {"refs": "single"}),
        SignatureInputs(2, "bleu-2", "bleu-2|refs:multi", "multi", "Referenced", {"refs": "multi"}),
        SignatureInputs(3, "ruber-unreferenced", "ruber-unreferenced|model:x", "none", "Unreferenced", {}),
        SignatureInputs(4, "ruber-gmean", "ruber-gmean|refs:single", "single", "Hybrid", {"refs": "single"}),
    )
    values = {s.id: {i: quality[i] * s.id + rng.random() * 3 for i in responses} for s in signatures}
    diversity = DiversityInputs(
        human={(s, f"c{c}"): (float(c % 3), float((c + 1) % 3)) for s in "ab" for c in range(6)},
        metrics={"distinct-1": {(s, f"c{c}"): rng.random() for s in "ab" for c in range(6)}},
    )
    inputs = ReportInputs(
        study_id=3,
        study_name="Built & checked",
        data_version=9,
        study_threshold=0.2,
        responses=responses,
        annotators=annotators,
        questions=(QuestionInputs("appropriateness", 0, 2, ratings, {}),),
        signatures=signatures,
        metric_values=values,
        diversity=diversity,
        code_version="0.1.0",
    )
    document, _ = build_report(inputs, ReportOptions(resamples=20))
    return document


def test_a_built_document_gives_every_table() -> None:
    document = _built_document()
    text = report_latex(document)
    assert text.startswith('% Correlation report of study "Built & checked" (dialeval)\n% data version 9;')
    assert r"study ``Built \& checked''" in text
    table = correlation_table_latex(document, "appropriateness")
    for label in ("Human (Avg)", "Human (Max)", "BLEU-2 (single)", "BLEU-2 (multi)", r"NN scorer ($s_U$)",
                  "RUBER geometric mean"):  # fmt: skip
        assert _line_of(table, label)
    rows = {(row["metric"], row["references"]): row for row in document["rows"]}
    expected = rows[("ruber-gmean", "single")]
    assert f"{expected['pearson']:.4f}" in _line_of(table, "RUBER geometric mean")
    best = max(row["pearson"] for row in document["rows"] if row["pearson"] is not None)
    assert rf"\textbf{{{best:.4f}}}" in table
    assert "40 replies with a human score" in table
    pairs = single_vs_multi_latex(document, "appropriateness")
    assert pairs.count(r"\\") == 3  # two header lines and BLEU-2's
    assert "\nBLEU-2 & " in pairs
    assert "Distinct-1 &" in diversity_latex(document)


def test_the_report_compiles_with_pdflatex(tmp_path: Path) -> None:
    document = paper_document()
    document["questions"][0]["name"] = NASTY
    for section in ("rows", "human", "filter", "single_vs_multi"):
        for entry in document[section]:
            entry["question"] = NASTY
    body = report_latex(document, study_name=NASTY, kendall=True) + report_latex(_built_document())
    log = compiled_log(
        "\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\usepackage{booktabs}\n"
        "\\begin{document}\n" + body + "\n\\end{document}\n",
        tmp_path,
        "report",
    )
    assert "Missing character" not in log


def test_a_study_of_imported_means_says_so_instead_of_counting_zero_raters() -> None:
    document = paper_document()
    for row in document["human"]:
        row.update({"pearson": None, "pearson_p": None, "spearman": None, "spearman_p": None, "raters": 0})
        row["note"] = "not computable: fewer than two raters with known identity"
    document["filter"][0].update({"ratings_total": 0, "ratings_removed": 0, "annotators_removed": 0})
    document["questions"][0]["imported_means"] = 120
    table = correlation_table_latex(document, QUESTION, study_name="imported")
    assert "averaged over 0 raters" not in table
    assert "0 of 0 ratings" not in table
    assert "imported means: there are no per-rater scores to filter" in table
    document["questions"][0]["imported_means"] = 0
    assert "No per-rater ratings." in correlation_table_latex(document, QUESTION, study_name="imported")


def test_every_metric_of_the_tables_has_its_papers_name() -> None:
    """ "cider-d" stood beside "BLEU-4"; the names the metrics' papers print."""
    assert metric_label("cider-d") == "CIDEr-D"
    assert metric_label("chrf++") == "chrF++"
    assert metric_label("maude") == "MaUde"
    assert metric_label("cross-ruber-gmean") == "Cross-RUBER geometric mean"
    assert metric_label("bleu-4") == "BLEU-4"
